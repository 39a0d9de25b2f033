import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import { MAX_ACTION_BODY_BYTES } from './readJsonBody.js';
import { requestUrlOf } from '../protocol/index.js';
import type { TaskConsole } from './TaskConsole.js';

export interface ConsoleServerHandle {
  /** The console's address, and the same with `?token=` to open it once. */
  url: string;
  openUrl: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** The most a request body may hold (an action's JSON: an answer, task ids); a larger one is refused (`413`). */
export const MAX_CONSOLE_BODY_BYTES = MAX_ACTION_BODY_BYTES;

/**
 * What is read and dropped of a body refused as too large before the connection is cut: as much as the MCP endpoint
 * accepts, so a client that sent the console an ordinary request body still reads its 413.
 */
const MAX_DROPPED_BYTES = 4 * 1024 * 1024;

/** Serves only the console on node:http (`mcp-tasks console`); every other path is 404. */
export async function serveConsole(
  taskConsole: TaskConsole,
  options: { port?: number; host?: string; onError?: (error: unknown) => void } = {},
): Promise<ConsoleServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    void (async () => {
      const url = requestUrlOf(req.headers.host, req.url);
      // Routes come from the request-target alone: a Host that is more than host[:port] is refused.
      if (url === undefined) return refuse(res, 400, 'Bad Request: the Host header must be host[:port]');
      const body = await bodyWithin(req, MAX_CONSOLE_BODY_BYTES);
      if (body === undefined)
        return refuse(res, 413, `Payload Too Large: the console takes at most ${MAX_CONSOLE_BODY_BYTES} bytes`);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
      }
      const method = req.method ?? 'GET';
      const withBody = method !== 'GET' && method !== 'HEAD' && body.byteLength > 0;
      const request = new Request(url, { method, headers, signal: abort.signal, ...(withBody && { body }) });
      const remoteAddress = req.socket.remoteAddress;
      const response =
        (await taskConsole.fetch(request, remoteAddress === undefined ? {} : { remoteAddress })) ??
        new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } });
      const answer: Record<string, string> = {};
      response.headers.forEach((value, name) => (answer[name] = value));
      res.writeHead(response.status, answer);
      // Event streams announce themselves at once; the first event may take a moment.
      res.flushHeaders();
      if (!response.body) return void res.end();
      const answerBody = Readable.fromWeb(response.body as NodeReadableStream);
      abort.signal.addEventListener('abort', () => answerBody.destroy(), { once: true });
      answerBody.on('error', () => res.destroy());
      answerBody.pipe(res);
    })().catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal server error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3001, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}${taskConsole.path}/`,
    openUrl: taskConsole.openUrl(origin),
    port,
    server,
    async close() {
      taskConsole.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function refuse(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end(text);
}

/**
 * Reads the request's body; undefined once it is larger than `maxBytes`. The rest of a larger body is then read and
 * dropped, up to `MAX_DROPPED_BYTES` more, before this answers: the refusal closes the connection, and a client still
 * sending into a closed connection gets a reset instead of the refusal. Past the bound the connection is cut.
 */
function bodyWithin(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length']) > maxBytes) return drop(req).then(() => undefined);
  return new Promise((resolve, reject) => {
    let received = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received <= maxBytes) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd).off('error', reject);
      void drop(req).then(() => resolve(undefined));
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

/** Resolves once the body is all read, or the connection cut. */
function drop(req: IncomingMessage): Promise<void> {
  let dropped = 0;
  const gone = new Promise<void>((resolve) => {
    req.once('end', resolve).once('close', resolve);
  });
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > MAX_DROPPED_BYTES) req.destroy();
  });
  req.resume();
  return gone;
}
