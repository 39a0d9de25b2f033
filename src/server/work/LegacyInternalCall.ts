import { InMemoryTransport } from '@modelcontextprotocol/server';

import type { InputAnswer, TaskOutcome, TaskRequest } from '../../engine/index.js';
import {
  ErrorCodes,
  isJsonRpcErrorResponse,
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  isObject,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../rpc/index.js';
import { CORE_PROTOCOL_VERSION } from '../../protocol/index.js';
import { mirroredCapabilities } from './mirroredCapabilities.js';
import type { ServerFactory, ServerLike, TransportLike } from '../ServerLike.js';
import { watchHandlers } from './watchHandlers.js';

/** Marks the server end of an internal link, so an attached server does not add tasks to its own internal calls. */
export const INTERNAL_TRANSPORT = Symbol.for('mcp-tasks.internal-transport');

const INPUT_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);

export interface InternalCallHooks {
  signal: AbortSignal;
  /** The requestor's capabilities, mirrored so the tool sees what the real client can do. */
  clientCapabilities: Record<string, unknown>;
  /** A request from the tool (elicitation, sampling, roots) that the requestor must answer. */
  requestInput(request: { method: string; params?: Record<string, unknown> }): Promise<InputAnswer>;
  onProgress?(params: Record<string, unknown>): void;
  /** A log message of the tool (`notifications/message`); tasks drop them, a plain call relays them. */
  onLog?(params: Record<string, unknown>): void;
  /** The call gave up on its abort while the tool's handler still runs: `ended` settles once that handler returns. */
  stillRunning?(ended: Promise<void>): void;
}

/**
 * Runs one request as an internal call: a fresh instance of the author's server, connected over an in-memory link,
 * receives the original request without its task part; its response is the task's outcome (DESIGN.md §4). Task runs
 * reuse links instead (InternalLinkPool) unless the author asks for a fresh instance per task.
 */
export async function runInternalCall(
  factory: ServerFactory,
  request: TaskRequest,
  hooks: InternalCallHooks,
): Promise<TaskOutcome> {
  const link = await InternalLink.open(factory, hooks.clientCapabilities);
  if (!(link instanceof InternalLink)) return link;
  try {
    return await link.call(request, hooks);
  } finally {
    await link.close();
  }
}

/**
 * An instance of the author's server, initialized over the SDK's in-memory transport with a requestor's
 * capabilities, that runs calls one at a time: each call's input requests, progress and logs go to that call's hooks.
 * A minimal JSON-RPC requester: results come back byte-for-byte.
 */
export class InternalLink {
  private nextId = 1;
  private readonly pending = new Map<RequestId, (response: JsonRpcResponse) => void>();
  private closed = false;
  /** The call in progress: its request id and hooks. */
  private current: { id: RequestId; hooks: InternalCallHooks } | undefined;
  /** The request a message from the server belongs to, while it is being delivered (the transport drops it). */
  private related: RequestId | undefined;
  /** A call was abandoned (cancelled): its tool may still be running, so the link is not used again. */
  private abandoned = false;
  /** The author's handlers still running, by request id (see watchHandlers); each leaves as it settles. */
  private readonly handling = new Map<RequestId, Promise<void>>();

  private constructor(
    private readonly instance: ServerLike,
    private readonly transport: TransportLike,
  ) {
    transport.onmessage = (message) => this.onMessage(message, this.related);
    transport.onclose = () => {
      this.closed = true;
      this.fail('The tool server closed the internal connection');
    };
  }

  /** Connects a fresh instance and initializes it; a refused initialize is the outcome of the call that needed it. */
  static async open(
    factory: ServerFactory,
    clientCapabilities: Record<string, unknown>,
  ): Promise<InternalLink | TaskOutcome> {
    const instance = await factory({ era: 'legacy' });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    Object.defineProperty(serverEnd, INTERNAL_TRANSPORT, { value: true });
    const link = new InternalLink(instance, clientEnd as unknown as TransportLike);
    watchHandlers(instance, (id, settled) => {
      link.handling.set(id, settled);
      void settled.then(() => {
        if (link.handling.get(id) === settled) link.handling.delete(id);
      });
    });
    // The in-memory transport delivers synchronously inside send but drops the options: note the related request.
    const send = serverEnd.send.bind(serverEnd);
    serverEnd.send = (message, options) => {
      link.related = options?.relatedRequestId;
      try {
        return send(message, options);
      } finally {
        link.related = undefined;
      }
    };
    try {
      await instance.connect(serverEnd);
      await clientEnd.start();
      const init = await link.request('initialize', {
        protocolVersion: CORE_PROTOCOL_VERSION,
        capabilities: mirroredCapabilities(clientCapabilities),
        clientInfo: { name: 'mcp-tasks-internal', version: '1' },
      });
      if (isJsonRpcErrorResponse(init)) {
        await link.close();
        return { kind: 'error', error: init.error };
      }
      await link.notify('notifications/initialized');
      return link;
    } catch (error) {
      await link.close();
      throw error;
    }
  }

  /** Whether another call may run on this link. */
  get reusable(): boolean {
    return !this.closed && !this.abandoned && this.current === undefined;
  }

  /** Runs one request on the instance; `hooks` serve what the tool asks and reports meanwhile. */
  async call(request: TaskRequest, hooks: InternalCallHooks): Promise<TaskOutcome> {
    const id = this.nextId;
    this.current = { id, hooks };
    try {
      const response = await this.request(request.method, request.params, hooks.signal);
      if (isJsonRpcErrorResponse(response)) return { kind: 'error', error: response.error };
      return { kind: 'result', result: response.result };
    } catch (error) {
      this.abandoned = true;
      const running = hooks.signal.aborted ? this.handling.get(id) : undefined;
      if (running) hooks.stillRunning?.(running);
      throw error;
    } finally {
      this.current = undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.transport.close().catch(() => {});
    await this.instance.close().catch(() => {});
  }

  private request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<JsonRpcResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        // The tool's own AbortSignal fires through the SDK's handling of notifications/cancelled.
        void this.notify('notifications/cancelled', { requestId: id, reason: String(signal?.reason ?? 'cancelled') });
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, (response) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(response);
      });
      this.transport.send({ jsonrpc: '2.0', id, method, params }).catch((error: unknown) => {
        this.pending.delete(id);
        reject(error);
      });
    });
  }

  private async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.closed) return;
    await this.transport.send({ jsonrpc: '2.0', method, ...(params && { params }) }).catch(() => {});
  }

  private fail(message: string): void {
    for (const [id, settle] of this.pending) {
      this.pending.delete(id);
      settle({ jsonrpc: '2.0', id, error: { code: ErrorCodes.INTERNAL_ERROR, message } });
    }
  }

  /**
   * The hooks of the call a message from the server belongs to: the current call's, unless the message names another
   * request (a late message of an earlier call, which has nobody to go to).
   */
  private hooksFor(related: RequestId | undefined): InternalCallHooks | undefined {
    const current = this.current;
    if (!current || (related !== undefined && related !== current.id)) return undefined;
    return current.hooks;
  }

  private onMessage(message: JsonRpcMessage, related: RequestId | undefined): void {
    if (isJsonRpcResponse(message)) {
      const settle = message.id === null ? undefined : this.pending.get(message.id);
      if (settle && message.id !== null) {
        this.pending.delete(message.id);
        settle(message);
      }
      return;
    }
    const hooks = this.hooksFor(related);
    if (isJsonRpcRequest(message)) {
      void this.answer(message, hooks);
      return;
    }
    if (!hooks || !isJsonRpcNotification(message) || !isObject(message.params)) return;
    if (message.method === 'notifications/progress') hooks.onProgress?.(message.params);
    else if (message.method === 'notifications/message') hooks.onLog?.(message.params);
  }

  /** Requests from the tool: input requests go to the requestor through the task; pings are answered here. */
  private async answer(request: JsonRpcRequest, hooks: InternalCallHooks | undefined): Promise<void> {
    let reply: JsonRpcResponse;
    if (request.method === 'ping') {
      reply = { jsonrpc: '2.0', id: request.id, result: {} };
    } else if (INPUT_METHODS.has(request.method) && hooks) {
      try {
        const answer = await hooks.requestInput({
          method: request.method,
          ...(request.params && { params: request.params }),
        });
        reply =
          'error' in answer
            ? { jsonrpc: '2.0', id: request.id, error: answer.error }
            : { jsonrpc: '2.0', id: request.id, result: answer.result };
      } catch (error) {
        reply = {
          jsonrpc: '2.0',
          id: request.id,
          error: { code: ErrorCodes.INTERNAL_ERROR, message: `Input request failed: ${String(error)}` },
        };
      }
    } else if (INPUT_METHODS.has(request.method)) {
      reply = {
        jsonrpc: '2.0',
        id: request.id,
        error: { code: ErrorCodes.INTERNAL_ERROR, message: 'Input request failed: the call it belongs to has ended' },
      };
    } else {
      reply = {
        jsonrpc: '2.0',
        id: request.id,
        error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `Method not found: ${request.method}` },
      };
    }
    if (!this.closed) await this.transport.send(reply).catch(() => {});
  }
}
