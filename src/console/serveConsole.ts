import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import { requestUrlOf } from './requestUrl.js';
import type { TaskConsole } from './TaskConsole.js';

export interface ConsoleServerHandle {
  /** The console's address, and the same with `?token=` to open it once. */
  url: string;
  openUrl: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/**
 * The most a request body may hold: the console reads none (its one POST, a cancel, carries nothing), so a larger one
 * is refused before it is read (`413`).
 */
export const MAX_CONSOLE_BODY_BYTES = 64 * 1024;

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
      if (!(await bodyWithin(req, MAX_CONSOLE_BODY_BYTES)))
        return refuse(res, 413, `Payload Too Large: the console takes at most ${MAX_CONSOLE_BODY_BYTES} bytes`);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
      }
      const request = new Request(url, { method: req.method ?? 'GET', headers, signal: abort.signal });
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
      const body = Readable.fromWeb(response.body as NodeReadableStream);
      abort.signal.addEventListener('abort', () => body.destroy(), { once: true });
      body.on('error', () => res.destroy());
      body.pipe(res);
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
 * Reads and drops the request's body; false once it is larger than `maxBytes`. The rest of a larger body is still
 * read and dropped, up to `maxBytes` more, so the client (still sending) gets the refusal instead of a reset; past
 * that the connection is cut.
 */
function bodyWithin(req: IncomingMessage, maxBytes: number): Promise<boolean> {
  if (Number(req.headers['content-length']) > maxBytes) {
    drop(req, maxBytes);
    return Promise.resolve(false);
  }
  return new Promise((resolve, reject) => {
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received <= maxBytes) return;
      req.off('data', onData).off('end', onEnd).off('error', reject);
      drop(req, maxBytes);
      resolve(false);
    };
    const onEnd = () => resolve(true);
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

function drop(req: IncomingMessage, maxBytes: number): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > maxBytes) req.destroy();
  });
  req.resume();
}
