import {
  isSpecType,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/client';

import type { DialectName } from './DialectName.js';
import { TaskInputError } from './TaskClientError.js';

/** Where a mid-task input request came from, so a host can show which task is asking. */
export interface InputContext {
  /** The task the request belongs to, when the server said so (related-task `_meta` or the task being polled). */
  taskId?: string;
  dialect: DialectName;
  /** The extension's `inputRequests` key (2026 only). */
  key?: string;
  /** Aborted when the answer is no longer wanted (the task was cancelled or the client closed). */
  signal?: AbortSignal;
}

export type ElicitationParams = ElicitRequest['params'];
export type SamplingParams = CreateMessageRequest['params'];

export type ElicitationHandler = (
  params: ElicitationParams,
  context: InputContext,
) => Promise<ElicitResult> | ElicitResult;
export type SamplingHandler = (
  params: SamplingParams,
  context: InputContext,
) => Promise<CreateMessageResult> | CreateMessageResult;

/** The host's answers to server requests, registered once and used by every dialect. */
export interface InputHandlers {
  elicitation?: ElicitationHandler;
  sampling?: SamplingHandler;
}

/**
 * Dispatches elicitation and sampling requests to the host's handlers, whichever way they arrived: a server request
 * during `tasks/result` (2025-11-25), an `inputRequests` entry (extension, spec E11: treated exactly like the
 * standalone request), an MRTR round, or a server request on SEP-1686's original stream.
 */
export class InputRouter {
  constructor(private readonly handlers: InputHandlers) {}

  get canElicit(): boolean {
    return this.handlers.elicitation !== undefined;
  }

  get canSample(): boolean {
    return this.handlers.sampling !== undefined;
  }

  /** The client capabilities these handlers justify declaring. */
  capabilities(): ClientCapabilities {
    return {
      ...(this.canElicit && { elicitation: { form: {} } }),
      ...(this.canSample && { sampling: {} }),
    };
  }

  /** Answers one request; the result is what the standalone request would have returned. */
  async answer(
    method: string,
    params: Record<string, unknown>,
    context: InputContext,
  ): Promise<Record<string, unknown>> {
    const { task: _task, ...plain } = params;
    if (method === 'elicitation/create') return this.elicit(plain, context);
    if (method === 'sampling/createMessage') return this.sample(plain, context);
    if (method === 'roots/list') return { roots: [] };
    throw new TaskInputError(`No handler for the input request ${method}`);
  }

  private async elicit(params: Record<string, unknown>, context: InputContext): Promise<Record<string, unknown>> {
    const handler = this.handlers.elicitation;
    // Without a handler the user cannot be asked; declining is the honest answer.
    if (handler === undefined) return { action: 'decline' };
    const result = await handler(params as ElicitationParams, context);
    if (!isSpecType.ElicitResult(result))
      throw new TaskInputError('The elicitation handler returned an invalid result');
    return result as Record<string, unknown>;
  }

  private async sample(params: Record<string, unknown>, context: InputContext): Promise<Record<string, unknown>> {
    const handler = this.handlers.sampling;
    if (handler === undefined) throw new TaskInputError('The server asked for sampling but no sampling handler is set');
    const result = await handler(params as SamplingParams, context);
    if (!isSpecType.CreateMessageResult(result) && !isSpecType.CreateMessageResultWithTools(result)) {
      throw new TaskInputError('The sampling handler returned an invalid result');
    }
    return result as Record<string, unknown>;
  }
}
