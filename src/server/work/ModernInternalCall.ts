import { AsyncLocalStorage } from 'node:async_hooks';

import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  PROTOCOL_VERSION_META_KEY,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';

import type { TaskOutcome, TaskRequest } from '../../engine/index.js';
import { MODERN_PROTOCOL_VERSION, ResultType, SERVER_INFO_META } from '../../protocol/index.js';
import { ErrorCodes, isObject, type JsonRpcResponse } from '../../rpc/index.js';
import { mirroredCapabilities } from './mirroredCapabilities.js';
import type { ServerFactory } from '../ServerLike.js';
import { watchHandlers } from './watchHandlers.js';

/** A multi-round-trip answer: the tool needs input before it can go on. */
export interface InputRequiredOutcome {
  kind: 'input_required';
  inputRequests: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
}

export interface ModernCallOptions {
  signal: AbortSignal;
  clientCapabilities: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  onProgress?(params: Record<string, unknown>): void;
  /** The call was aborted while the tool's handler still runs: `ended` settles once that handler returns. */
  stillRunning?(ended: Promise<void>): void;
}

/**
 * Requests on a fresh instance of the author's server on the 2026-07-28 wire, in process (the SDK's own per-request
 * handler, no socket). A tool written with `inputRequired(...)` comes back with its input requests and request state
 * instead of holding the call open, so a task can wait for a person without holding memory. One per server factory:
 * the handler is built on the first call and kept.
 */
export class ModernInternalCall {
  private handler: McpHttpHandler | undefined;
  /** The call whose fresh instance the factory is building (the SDK builds it inside `fetch`): its handler's end. */
  private readonly calls = new AsyncLocalStorage<{ handling?: Promise<void> }>();

  constructor(private readonly factory: ServerFactory) {}

  /**
   * Serves one request ahead of time, so the first task does not pay for building the SDK's wire schemas inside its
   * synchronous window.
   */
  async warm(): Promise<void> {
    await this.run(
      { method: 'tools/list', params: {} },
      { signal: AbortSignal.timeout(10_000), clientCapabilities: {} },
    ).catch(() => {});
  }

  async run(request: TaskRequest, options: ModernCallOptions): Promise<TaskOutcome | InputRequiredOutcome> {
    const { factory, calls } = this;
    this.handler ??= createMcpHandler(
      async (context) => {
        const instance = await factory(context);
        const call = calls.getStore();
        if (call) watchHandlers(instance, (_id, settled) => (call.handling = settled));
        return instance as never;
      },
      { legacy: 'reject' },
    );
    const call: { handling?: Promise<void> } = {};
    try {
      return await calls.run(call, () => this.exchange(request, options));
    } finally {
      // Aborted, the exchange ends at once (with an error, or with no response); the handler may not have.
      if (options.signal.aborted && call.handling) options.stillRunning?.(call.handling);
    }
  }

  private async exchange(
    request: TaskRequest,
    options: ModernCallOptions,
  ): Promise<TaskOutcome | InputRequiredOutcome> {
    const handler = this.handler as McpHttpHandler;
    const meta = isObject(request.params['_meta']) ? request.params['_meta'] : {};
    const params: Record<string, unknown> = {
      ...request.params,
      _meta: {
        ...meta,
        [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION,
        [CLIENT_CAPABILITIES_META_KEY]: mirroredCapabilities(options.clientCapabilities),
        [CLIENT_INFO_META_KEY]: { name: 'mcp-tasks-internal', version: '1' },
      },
      ...(options.inputResponses &&
        Object.keys(options.inputResponses).length > 0 && { inputResponses: options.inputResponses }),
      ...(options.requestState !== undefined && { requestState: options.requestState }),
    };
    const name =
      typeof request.params['name'] === 'string'
        ? request.params['name']
        : typeof request.params['uri'] === 'string'
          ? request.params['uri']
          : undefined;
    const response = await handler.fetch(
      new Request('http://mcp-tasks.internal/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
          'mcp-method': request.method,
          ...(name !== undefined && { 'mcp-name': name }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: request.method, params }),
        // Closing the exchange is how the 2026-07-28 wire cancels a request: the tool's AbortSignal fires.
        signal: options.signal,
      }),
    );
    const reply = await readReply(response, options);
    if ('error' in reply) return { kind: 'error', error: reply.error };
    const { resultType, ...result } = reply.result;
    if (resultType === ResultType.inputRequired) {
      return {
        kind: 'input_required',
        inputRequests: (result['inputRequests'] ?? {}) as InputRequiredOutcome['inputRequests'],
        ...(typeof result['requestState'] === 'string' && { requestState: result['requestState'] }),
      };
    }
    return { kind: 'result', result: withoutServerInfo(result) };
  }
}

/** The terminal JSON-RPC response of the exchange; progress on the way goes to `onProgress`. */
async function readReply(
  response: Response,
  options: ModernCallOptions,
): Promise<
  (JsonRpcResponse & { result: Record<string, unknown> }) | { error: { code: number; message: string; data?: unknown } }
> {
  const type = response.headers.get('content-type') ?? '';
  const messages: Array<Record<string, unknown>> = [];
  const text = await response.text();
  if (type.includes('text/event-stream')) {
    for (const line of text.split('\n'))
      if (line.startsWith('data:')) messages.push(JSON.parse(line.slice(5)) as Record<string, unknown>);
  } else if (text) {
    messages.push(JSON.parse(text) as Record<string, unknown>);
  }
  for (const message of messages) {
    if (message['method'] === 'notifications/progress' && isObject(message['params']))
      options.onProgress?.(message['params']);
    if ('result' in message || 'error' in message) return message as never;
  }
  return {
    error: {
      code: ErrorCodes.INTERNAL_ERROR,
      message: `The tool server answered HTTP ${response.status} without a JSON-RPC response`,
    },
  };
}

/** The server-info stamp is wire decoration of this exchange, not part of the tool's result. */
function withoutServerInfo(result: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(result['_meta']) || !(SERVER_INFO_META in result['_meta'])) return result;
  const { [SERVER_INFO_META]: _serverInfo, ...meta } = result['_meta'];
  const { _meta, ...rest } = result;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}
