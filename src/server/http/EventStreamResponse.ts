import type { ServerResponse } from 'node:http';

import { ProtocolErrorCode } from '@modelcontextprotocol/server';

import { isJsonRpcResponse, type JsonRpcMessage } from '../../rpc/index.js';

/** How the HTTP server writes a web Response, and its output bounds (serveHttp's). */
export interface EventStreamIo {
  write(response: Response): Promise<void>;
  maxPendingBytes: number;
  slowReaderMs: number;
  onSlowReader(): void;
}

/**
 * The headers of the SDK's per-request transport when it turns an answer into SSE, as serveHttp wrote them from its
 * web Response (names lower-cased, in the order Headers iterates them).
 */
const SSE_HEADERS = {
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no',
};
/** The SDK transport's keep-alive comment frame. */
export const KEEP_ALIVE_FRAME = ': keepalive\n\n';

/**
 * One `events/stream` exchange of the 2026-07-28 wire written to node's response as the SDK's per-request transport
 * writes it (src/server/http/NodeEventStreams.ts says why it is not that transport): an answer that comes before
 * anything else is plain JSON (200, or 400 for -32021 as the SDK's ladder has it); the first notification turns the
 * answer into SSE (`event: message` frames, no ids), the answer's own frame ends it. Output is bounded as
 * writeNodeResponse bounds it: a write waits while the client is behind, a client that takes nothing for
 * `slowReaderMs` or leaves more than `maxPendingBytes` unread is cut off.
 */
export class EventStreamResponse {
  /** The headers are out and the body is SSE. */
  streaming = false;
  private done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly io: EventStreamIo,
  ) {}

  /** Whether the exchange is over (answered, cut, or the client gone). */
  get closed(): boolean {
    return this.done || this.res.destroyed;
  }

  /** Sends `message` as the SDK transport sends a message related to its request; resolves once it may go on. */
  async send(message: JsonRpcMessage): Promise<void> {
    if (this.closed) return;
    if (isJsonRpcResponse(message)) {
      this.done = true;
      if (!this.streaming) {
        const missing = 'error' in message && message.error.code === ProtocolErrorCode.MissingRequiredClientCapability;
        return this.io.write(
          Response.json(message, { status: missing ? 400 : 200, headers: { 'Content-Type': 'application/json' } }),
        );
      }
      this.res.end(frameOf(message));
      return;
    }
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, SSE_HEADERS);
      this.res.flushHeaders();
    }
    await this.write(frameOf(message));
  }

  /** A keep-alive comment, unless the client is behind already (it has bytes to read, so the line is alive). */
  keepAlive(): void {
    if (this.streaming && !this.closed && !this.res.writableNeedDrain) this.res.write(KEEP_ALIVE_FRAME);
  }

  /** Ends the exchange without its answer (the handler closes), as the SDK transport's close ends its stream. */
  end(): void {
    if (this.closed) return;
    this.done = true;
    if (this.streaming) this.res.end();
    else this.res.destroy();
  }

  private async write(frame: string): Promise<void> {
    const res = this.res;
    if (res.writableLength > this.io.maxPendingBytes) return this.cut();
    if (res.write(frame)) return;
    // Behind: wait for the client to take its bytes; one that takes nothing in slowReaderMs is cut off.
    let unread = res.writableLength;
    while (res.writableNeedDrain && !res.destroyed) {
      if (await this.drained()) continue;
      if (res.writableLength >= unread) return this.cut();
      unread = res.writableLength;
    }
  }

  /** True when the response drained (or closed), false when `slowReaderMs` passed first. */
  private drained(): Promise<boolean> {
    const res = this.res;
    return new Promise((resolve) => {
      const settle = (drained: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain).off('close', onDrain);
        resolve(drained);
      };
      const onDrain = () => settle(true);
      const timer = setTimeout(() => settle(false), this.io.slowReaderMs);
      res.once('drain', onDrain).once('close', onDrain);
    });
  }

  private cut(): void {
    this.io.onSlowReader();
    this.res.destroy();
  }
}

function frameOf(message: JsonRpcMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
