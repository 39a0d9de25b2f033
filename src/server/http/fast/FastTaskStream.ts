import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { isJsonRpcResponse, type JsonRpcMessage } from '../../../rpc/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

import type { MemoryEventStore } from '../MemoryEventStore.js';

export interface FastTaskStreamOptions {
  sessionId: string;
  events: MemoryEventStore;
  /** Whether the client's protocol version takes the empty priming event that makes the stream resumable. */
  primed: boolean;
  /** The reconnection delay the priming event suggests. */
  retryMs: number;
  /** A comment line this often keeps an idle stream (a long `tasks/result`) from being cut by proxies. */
  keepAliveMs: number;
  /** Bytes written but not yet taken by the client beyond which the connection is cut (as writeNodeResponse does). */
  maxPendingBytes: number;
  /** A client that takes nothing of its pending output for this long is cut off the same way. */
  slowReaderMs: number;
  onSlowReader(): void;
  /** Called once, when the request's response has been stored (whether or not a client was there to take it). */
  onAnswered(): void;
}

/** The headers the SDK's transport answers a session's POST with when it opens the request's SSE stream. */
export function sseHeaders(sessionId: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'mcp-session-id': sessionId,
  };
}

/**
 * How long a stream's headers wait for its answer: well under any client's patience for response headers, and long
 * enough for a durable write or a quick task under load.
 */
const HOLD_MS = 100;

/** One SSE event as the SDK's transport writes it, for a message serialised as `json`. */
function sseEvent(eventId: string, json: string): string {
  return `event: message\nid: ${eventId}\ndata: ${json}\n\n`;
}

/**
 * The SSE stream of one request answered on the fast path, written straight to node:http. It reproduces the SDK
 * transport's stream byte for byte: the same headers, the priming event, every message stored in the session's event
 * store before it is written (so a client whose connection drops resumes it with Last-Event-ID, see `resume`), the
 * keep-alive comments, and the end of the stream with the response.
 */
export class FastTaskStream {
  readonly streamId = randomUUID();
  private res: ServerResponse | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  /** The events stored before the client's connection was open, in order: written with the headers. */
  private early: string[] | undefined = [];
  private answered = false;
  /** The client's connection is to end as soon as it is open (closeClient came first). */
  private closeOnOpen = false;
  /** The client's response, its headers not sent yet while the answer may still come in time to go with them. */
  private held: { res: ServerResponse; timer: NodeJS.Timeout } | undefined;
  private readonly watched = new WeakSet<ServerResponse>();

  constructor(private readonly options: FastTaskStreamOptions) {
    // Stored first, so its id comes before every message's: a resumption from it replays them all.
    if (options.primed) {
      const priming = options.events.store(this.streamId, {} as JSONRPCMessage);
      this.early?.push(`id: ${priming}\nretry: ${options.retryMs}\ndata: \n\n`);
    }
  }

  get attached(): boolean {
    return this.res !== undefined || this.held !== undefined;
  }

  /** Whether the stream is resumable (its priming event was written). */
  get primed(): boolean {
    return this.options.primed;
  }

  /**
   * Writes the headers and what the stream holds so far, once what the request set off in this turn of the event
   * loop has gone out (a forwarded call's upstream request, say), so the client is not woken in between. A request
   * answered by then (a `tasks/get`) goes out whole in one write. Otherwise the headers wait up to `HOLD_MS` for the
   * answer (a creation waiting for its durable write, the result of a short task), which then goes with them, again
   * in one write; the first message that is not the answer, the deadline or closeClient sends them at once.
   */
  async open(res: ServerResponse): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.answered || this.closeOnOpen) return this.finish(res);
    // Anything but the priming event is a message the client is to see now (a progress report, a question).
    if ((this.early?.length ?? 0) > (this.options.primed ? 1 : 0)) return this.stream(res);
    const timer = setTimeout(() => this.release(), HOLD_MS);
    this.held = { res, timer };
    res.once('close', () => {
      if (this.held?.res !== res) return;
      // The client went away before anything was written: what comes is stored only, for a resumption.
      clearTimeout(timer);
      this.held = undefined;
      this.early = undefined;
    });
  }

  /** Stores a message of the request and writes it (or keeps it for `open`); the response ends the stream. */
  readonly send = async (message: JsonRpcMessage): Promise<void> => {
    if (this.answered) return;
    const json = JSON.stringify(message);
    const text = sseEvent(this.options.events.store(this.streamId, message as JSONRPCMessage, json), json);
    // After closeClient, a message is only stored: the client resumes the stream to get it.
    if (this.early) {
      if (!this.closeOnOpen) this.early.push(text);
    } else this.write(text);
    if (!isJsonRpcResponse(message)) return this.release();
    this.answered = true;
    this.options.onAnswered();
    const held = this.unhold();
    if (held) this.finish(held);
    else this.end();
  };

  /**
   * A client resuming the stream (GET with Last-Event-ID): the events after `lastEventId` are written again, then
   * whatever comes until the response.
   */
  async resume(res: ServerResponse, lastEventId: string): Promise<void> {
    res.writeHead(200, sseHeaders(this.options.sessionId));
    coalesce(res);
    this.attach(res);
    for (const [eventId, json] of this.options.events.eventsAfter(lastEventId)) this.write(sseEvent(eventId, json));
  }

  /**
   * Ends the client's connection without the answer, which is still stored: the client resumes the stream with
   * Last-Event-ID (the transport's `closeSSEStream`, for servers that make clients poll).
   */
  closeClient(): void {
    if (this.res) return this.end();
    if (!this.early) return;
    this.closeOnOpen = true;
    const held = this.unhold();
    if (held) this.finish(held);
  }

  /** Ends the stream (the session closed): a later answer is not stored. */
  close(): void {
    this.answered = true;
    const held = this.unhold();
    if (held) this.finish(held);
    else this.end();
  }

  /** The held response, no longer held (undefined when none is). */
  private unhold(): ServerResponse | undefined {
    const held = this.held;
    if (!held) return undefined;
    clearTimeout(held.timer);
    this.held = undefined;
    return held.res;
  }

  /** Sends the headers of a held response with what the stream holds so far, and keeps the stream open. */
  private release(): void {
    const held = this.unhold();
    if (held && !held.destroyed) this.stream(held);
  }

  /** The whole exchange in one write: headers, what the stream holds, the end. */
  private finish(res: ServerResponse): void {
    res.end(this.writeHead(res));
    if (res.writableNeedDrain) this.watchReader(res);
  }

  /** The headers and what the stream holds so far, the writes of one more turn joined to them; the stream stays open. */
  private stream(res: ServerResponse): void {
    const early = this.writeHead(res);
    coalesce(res);
    this.attach(res);
    // Without a priming event the headers go alone, when `coalesce` lets the writes out.
    if (early !== '') this.write(early);
  }

  /** Sets the response's headers and hands over what the stream held until then: from here, messages are written. */
  private writeHead(res: ServerResponse): string {
    const early = (this.early ?? []).join('');
    this.early = undefined;
    res.writeHead(200, sseHeaders(this.options.sessionId));
    return early;
  }

  private attach(res: ServerResponse): void {
    this.res = res;
    res.once('close', () => this.detach(res));
    this.keepAlive = setInterval(() => this.write(': keepalive\n\n'), this.options.keepAliveMs);
    this.keepAlive.unref();
  }

  private detach(res: ServerResponse): void {
    if (this.res !== res) return;
    clearInterval(this.keepAlive);
    this.res = undefined;
  }

  private write(text: string): void {
    const res = this.res;
    if (!res || res.destroyed) return;
    if (res.writableLength > this.options.maxPendingBytes) {
      this.options.onSlowReader();
      res.destroy();
      return;
    }
    res.write(text);
    if (res.writableNeedDrain) this.watchReader(res);
  }

  /** Cuts a client that takes nothing of its pending output for `slowReaderMs` (even after the stream ended). */
  private watchReader(res: ServerResponse): void {
    if (this.watched.has(res)) return;
    this.watched.add(res);
    let unread = res.writableLength;
    const timer = setInterval(() => {
      if (res.destroyed || !res.writableNeedDrain) return stop();
      if (res.writableLength >= unread) {
        this.options.onSlowReader();
        res.destroy();
        return stop();
      }
      unread = res.writableLength;
    }, this.options.slowReaderMs);
    const stop = () => {
      clearInterval(timer);
      this.watched.delete(res);
    };
    res.once('close', stop);
  }

  private end(): void {
    const res = this.res;
    if (!res) return;
    this.detach(res);
    res.end();
  }
}

/**
 * Holds the response's writes until the event loop has run what is due now (one `setImmediate`), then sends the
 * headers and all of them together: one system call instead of one per write for a request answered at once, and a
 * stream that waits longer still has its headers out within the same turn.
 */
function coalesce(res: ServerResponse): void {
  res.cork();
  setImmediate(() => {
    if (res.destroyed) return;
    if (!res.headersSent) res.flushHeaders();
    res.uncork();
  });
}
