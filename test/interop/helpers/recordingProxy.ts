import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll } from 'vitest';

import { HttpFixture } from '../../helpers/rawWire.js';

export type WireMessage = Record<string, unknown> & {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** One HTTP exchange a peer had with the server, as it crossed the proxy. */
export interface ProxiedExchange {
  readonly httpMethod: string;
  /** Request headers, lower-cased. */
  readonly headers: Record<string, string>;
  /** The JSON-RPC message POSTed, if the body was one. */
  readonly message: WireMessage | undefined;
  readonly httpStatus: number;
  /** Every JSON-RPC message the server answered with (one JSON body, or the events of an SSE stream). */
  readonly replies: WireMessage[];
}

/**
 * A transparent HTTP proxy in front of a fixture server that records each exchange, so a test can check what a
 * third-party client (one we cannot instrument) really put on the wire. Answers are streamed through unchanged.
 */
export class RecordingProxy {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    /** Every exchange so far, in the order the requests arrived. */
    readonly exchanges: ProxiedExchange[],
  ) {}

  static async start(target: string): Promise<RecordingProxy> {
    const targetUrl = new URL(target);
    const exchanges: ProxiedExchange[] = [];
    const server = createServer((request, response) => {
      // The upstream request ends with the peer's: a dropped SSE stream is dropped upstream too.
      const controller = new AbortController();
      response.once('close', () => controller.abort());
      void forward(request, targetUrl, exchanges, controller.signal)
        .then(async ({ status, headers, body, done }) => {
          response.writeHead(status, headers);
          if (body) {
            for await (const chunk of body) response.write(chunk);
          }
          response.end();
          done();
        })
        .catch(() => {
          if (!response.headersSent) response.writeHead(502);
          response.end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new RecordingProxy(server, `http://127.0.0.1:${port}${targetUrl.pathname}`, exchanges);
  }

  /** The POSTed JSON-RPC requests of one method, with the server's response to each. */
  calls(
    method: string,
  ): Array<{ request: WireMessage; headers: Record<string, string>; response: WireMessage | undefined }> {
    return this.exchanges
      .filter((exchange) => exchange.message?.method === method && exchange.message.id !== undefined)
      .map((exchange) => ({
        request: exchange.message as WireMessage,
        headers: exchange.headers,
        response: exchange.replies.find((reply) => reply.id === exchange.message?.id && !('method' in reply)),
      }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function forward(
  request: IncomingMessage,
  target: URL,
  exchanges: ProxiedExchange[],
  signal: AbortSignal,
): Promise<{
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array> | undefined;
  done: () => void;
}> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
  }
  const answer = await fetch(new URL(request.url ?? '/', target), {
    method: request.method ?? 'GET',
    headers,
    ...(body.length > 0 && { body }),
    signal,
  });
  const answerHeaders: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) {
      answerHeaders[name] = value;
    }
  });

  let message: WireMessage | undefined;
  try {
    message = body.length > 0 ? (JSON.parse(body.toString()) as WireMessage) : undefined;
  } catch {
    message = undefined;
  }
  const replies: WireMessage[] = [];
  exchanges.push({ httpMethod: request.method ?? 'GET', headers, message, httpStatus: answer.status, replies });

  // The answer is teed: streamed to the peer as it arrives, and parsed into `replies` for the record.
  const decoder = new TextDecoder();
  const isSse = (answer.headers.get('content-type') ?? '').includes('text/event-stream');
  let text = '';
  const source = answer.body as unknown as AsyncIterable<Uint8Array> | null;
  async function* tee(): AsyncIterable<Uint8Array> {
    if (!source) return;
    for await (const chunk of source) {
      text += decoder.decode(chunk, { stream: true });
      if (isSse) text = takeEvents(text, replies);
      yield chunk;
    }
  }
  const done = () => {
    if (isSse || text.trim() === '') return;
    try {
      const parsed = JSON.parse(text) as WireMessage | WireMessage[];
      replies.push(...(Array.isArray(parsed) ? parsed : [parsed]));
    } catch {
      // Not JSON-RPC (an HTTP error page, say): nothing to record.
    }
  };
  return { status: answer.status, headers: answerHeaders, body: source ? tee() : undefined, done };
}

/** Moves the complete SSE events at the head of `buffer` into `into`; returns the unfinished rest. */
function takeEvents(buffer: string, into: WireMessage[]): string {
  let rest = buffer;
  let boundary: number;
  while ((boundary = rest.search(/\r?\n\r?\n/)) >= 0) {
    const event = rest.slice(0, boundary);
    rest = rest.slice(boundary).replace(/^\r?\n\r?\n/, '');
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data) into.push(JSON.parse(data) as WireMessage);
  }
  return rest;
}

/**
 * The fixture server behind a recording proxy for the enclosing `describe` block (started before its tests, stopped
 * after them): third-party clients talk to `proxy.url`, the test reads `proxy.exchanges`.
 */
export function recordedFixture(): { readonly proxy: RecordingProxy } {
  let fixture: HttpFixture | undefined;
  const state = {} as { proxy: RecordingProxy };
  beforeAll(async () => {
    fixture = await HttpFixture.start();
    state.proxy = await RecordingProxy.start(fixture.url);
  });
  afterAll(async () => {
    await state.proxy?.close();
    await fixture?.close();
  });
  return state;
}
