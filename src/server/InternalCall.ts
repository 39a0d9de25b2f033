import { InMemoryTransport } from '@modelcontextprotocol/server';

import type { InputAnswer, TaskOutcome, TaskRequest } from '../engine/index.js';
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
} from '../rpc/index.js';
import { CORE_PROTOCOL_VERSION } from '../protocol/index.js';
import { mirroredCapabilities } from './mirroredCapabilities.js';
import type { ServerFactory, TransportLike } from './ServerLike.js';

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
}

/**
 * Runs one request as an internal call: a fresh instance of the author's server, connected over an in-memory link,
 * receives the original request without its task part; its response is the task's outcome (DESIGN.md §4).
 */
export async function runInternalCall(
  factory: ServerFactory,
  request: TaskRequest,
  hooks: InternalCallHooks,
): Promise<TaskOutcome> {
  const instance = await factory({ era: 'legacy' });
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  Object.defineProperty(serverEnd, INTERNAL_TRANSPORT, { value: true });
  const link = new InternalLink(clientEnd as unknown as TransportLike, hooks);
  try {
    await instance.connect(serverEnd);
    await clientEnd.start();
    const init = await link.request('initialize', {
      protocolVersion: CORE_PROTOCOL_VERSION,
      capabilities: mirroredCapabilities(hooks.clientCapabilities),
      clientInfo: { name: 'mcp-tasks-internal', version: '1' },
    });
    if (isJsonRpcErrorResponse(init)) return { kind: 'error', error: init.error };
    await link.notify('notifications/initialized');
    const response = await link.request(request.method, request.params, hooks.signal);
    if (isJsonRpcErrorResponse(response)) return { kind: 'error', error: response.error };
    return { kind: 'result', result: response.result };
  } finally {
    link.dispose();
    await clientEnd.close().catch(() => {});
    await instance.close().catch(() => {});
  }
}

/** A minimal JSON-RPC requester over the SDK's in-memory transport: results come back byte-for-byte. */
class InternalLink {
  private nextId = 1;
  private readonly pending = new Map<RequestId, (response: JsonRpcResponse) => void>();
  private disposed = false;

  constructor(
    private readonly transport: TransportLike,
    private readonly hooks: InternalCallHooks,
  ) {
    transport.onmessage = (message) => this.onMessage(message);
    transport.onclose = () => this.fail('The tool server closed the internal connection');
  }

  request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<JsonRpcResponse> {
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

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.disposed) return;
    await this.transport.send({ jsonrpc: '2.0', method, ...(params && { params }) }).catch(() => {});
  }

  dispose(): void {
    this.disposed = true;
  }

  private fail(message: string): void {
    for (const [id, settle] of this.pending) {
      this.pending.delete(id);
      settle({ jsonrpc: '2.0', id, error: { code: ErrorCodes.INTERNAL_ERROR, message } });
    }
  }

  private onMessage(message: JsonRpcMessage): void {
    if (isJsonRpcResponse(message)) {
      const settle = message.id === null ? undefined : this.pending.get(message.id);
      if (settle && message.id !== null) {
        this.pending.delete(message.id);
        settle(message);
      }
      return;
    }
    if (isJsonRpcRequest(message)) {
      void this.answer(message);
      return;
    }
    if (!isJsonRpcNotification(message) || !isObject(message.params)) return;
    if (message.method === 'notifications/progress') this.hooks.onProgress?.(message.params);
    else if (message.method === 'notifications/message') this.hooks.onLog?.(message.params);
  }

  /** Requests from the tool: input requests go to the requestor through the task; pings are answered here. */
  private async answer(request: JsonRpcRequest): Promise<void> {
    let reply: JsonRpcResponse;
    if (request.method === 'ping') {
      reply = { jsonrpc: '2.0', id: request.id, result: {} };
    } else if (INPUT_METHODS.has(request.method)) {
      try {
        const answer = await this.hooks.requestInput({
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
    } else {
      reply = {
        jsonrpc: '2.0',
        id: request.id,
        error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `Method not found: ${request.method}` },
      };
    }
    if (!this.disposed) await this.transport.send(reply).catch(() => {});
  }
}
