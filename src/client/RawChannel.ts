import { randomUUID } from 'node:crypto';

import type { JSONRPCMessage, JSONRPCNotification, MessageExtraInfo, Transport } from '@modelcontextprotocol/client';

import { honouringRetryAfter, retryAfterMsOf } from './retryAfter.js';
import { TaskConnectionError, type RpcErrorObject } from './TaskClientError.js';
import { toTaskClientError } from './toTaskClientError.js';
import { ErrorCodes, isObject } from '../protocol/index.js';

/** A JSON-RPC answer, untouched by any SDK result decoding. */
export type RawReply = { ok: true; result: Record<string, unknown> } | { ok: false; error: RpcErrorObject };

export interface RawRequestOptions {
  /** Reject (and cancel on the wire) when no answer arrives in time. Absent: wait as long as the connection lives. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Cancel by closing the request's own HTTP response stream instead of sending `notifications/cancelled`
   * (how the 2026-07-28 wire cancels on Streamable HTTP).
   */
  cancelByStream?: boolean;
}

export interface RawCall {
  /** The JSON-RPC id on the wire; SEP-1686 cancels the task by cancelling this id. */
  id: string;
  reply: Promise<RawReply>;
}

interface Pending {
  resolve(reply: RawReply): void;
  reject(error: Error): void;
}

/** The largest delay `setTimeout` honours; anything above it fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A side channel on an SDK transport for requests whose answers the SDK would reshape or reject: a `tools/call`
 * answered with `resultType: "task"` on the 2026 wire, and SEP-1686's original request, whose id the client must
 * know to cancel it. Ids are prefixed and unique, so they never collide with the SDK's own; every other message
 * still reaches the SDK, and notifications are also offered to listeners here.
 */
export class RawChannel {
  private readonly prefix = `mcp-tasks:${randomUUID()}:`;
  private counter = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<(notification: JSONRPCNotification) => boolean | void>();
  private closed: TaskConnectionError | undefined;

  constructor(private readonly transport: Transport) {}

  /** Chains onto the handlers the SDK installed at connect. */
  attach(): void {
    const forward = this.transport.onmessage;
    this.transport.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      if (this.consume(message)) return;
      forward?.(message, extra);
    };
    const onclose = this.transport.onclose;
    this.transport.onclose = () => {
      this.fail(new TaskConnectionError('The connection to the server closed'));
      onclose?.();
    };
  }

  get isClosed(): boolean {
    return this.closed !== undefined;
  }

  /** Sees every notification; one that returns `true` has consumed it, and the SDK does not get it. */
  onNotification(listener: (notification: JSONRPCNotification) => boolean | void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  request(method: string, params: Record<string, unknown>, options: RawRequestOptions = {}): RawCall {
    const id = `${this.prefix}${++this.counter}`;
    // A rate-limit refusal did nothing on the server, so the same request is sent again (same id) when it says to.
    const reply = honouringRetryAfter(
      () => this.send(id, method, params, options),
      (outcome) => ('value' in outcome && !outcome.value.ok ? retryAfterMsOf(outcome.value.error) : undefined),
      options.signal,
    );
    return { id, reply };
  }

  private send(
    id: string,
    method: string,
    params: Record<string, unknown>,
    options: RawRequestOptions,
  ): Promise<RawReply> {
    const stream = options.cancelByStream === true ? new AbortController() : undefined;
    return new Promise<RawReply>((resolve, reject) => {
      if (this.closed !== undefined) {
        reject(this.closed);
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        settle.reject(abortReason(options.signal));
        this.cancel(id, 'The caller aborted the request', stream);
      };
      const cleanup = () => {
        if (timer !== undefined) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      const settle: Pending = {
        resolve: (value) => {
          cleanup();
          resolve(value);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      if (options.signal?.aborted === true) {
        reject(abortReason(options.signal));
        return;
      }
      this.pending.set(id, settle);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeoutMs !== undefined) {
        const timeoutMs = Math.min(options.timeoutMs, MAX_TIMER_MS);
        timer = setTimeout(() => {
          settle.reject(new TaskConnectionError(`No answer to ${method} within ${timeoutMs} ms`));
          this.cancel(id, 'Timed out', stream);
        }, timeoutMs);
      }
      this.transport
        .send(
          { jsonrpc: '2.0', id, method, params },
          {
            ...(stream !== undefined && { requestSignal: stream.signal }),
            // Streamable HTTP: the request's SSE stream ended (dropped, or closed by the server) with no answer on it.
            onRequestStreamEnd: () =>
              settle.reject(new TaskConnectionError(`The stream for ${method} ended without an answer`)),
          },
        )
        .catch((error: unknown) => settle.reject(toTaskClientError(error)));
    });
  }

  /** Sends `notifications/cancelled` for a request id, or closes the request's stream where that is the signal. */
  cancel(requestId: string | number, reason: string, stream?: AbortController): void {
    if (stream !== undefined) {
      stream.abort();
      return;
    }
    void this.notify('notifications/cancelled', { requestId, reason }).catch(() => undefined);
  }

  /** Stops waiting for an answer that will not come (a request cancelled by notification is never answered). */
  abandon(requestId: string, error: Error): void {
    this.pending.get(requestId)?.reject(error);
  }

  async notify(method: string, params: Record<string, unknown>): Promise<void> {
    if (this.closed !== undefined) throw this.closed;
    await this.transport.send({ jsonrpc: '2.0', method, params });
  }

  /** Rejects everything in flight; later requests fail at once. */
  fail(error: TaskConnectionError): void {
    this.closed ??= error;
    for (const pending of [...this.pending.values()]) pending.reject(error);
    this.pending.clear();
  }

  private consume(message: JSONRPCMessage): boolean {
    const raw = message as unknown as Record<string, unknown>;
    if (!('method' in raw)) {
      const id = raw['id'];
      const pending = typeof id === 'string' ? this.pending.get(id) : undefined;
      if (pending === undefined) return false;
      const error = raw['error'];
      if (isObject(error)) {
        pending.resolve({
          ok: false,
          error: {
            code: typeof error['code'] === 'number' ? error['code'] : ErrorCodes.INTERNAL_ERROR,
            message: typeof error['message'] === 'string' ? error['message'] : 'Unknown error',
            ...(error['data'] !== undefined && { data: error['data'] }),
          },
        });
      } else {
        pending.resolve({ ok: true, result: isObject(raw['result']) ? raw['result'] : {} });
      }
      return true;
    }
    if (!('id' in raw)) {
      let consumed = false;
      for (const listener of [...this.listeners]) {
        try {
          consumed = listener(message as JSONRPCNotification) === true || consumed;
        } catch {
          // A listener's failure must not stop the SDK from seeing the notification.
        }
      }
      return consumed;
    }
    return false;
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new TaskConnectionError('The request was aborted');
}
