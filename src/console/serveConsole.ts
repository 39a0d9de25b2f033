import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import { toWebRequest } from '@modelcontextprotocol/node';

import type { TaskConsole } from './TaskConsole.js';

export interface ConsoleServerHandle {
  /** The console's address, and the same with `?token=` to open it once. */
  url: string;
  openUrl: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

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
      const request = await toWebRequest(req, undefined, { signal: abort.signal });
      const response =
        (await taskConsole.fetch(request)) ??
        new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } });
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => (headers[name] = value));
      res.writeHead(response.status, headers);
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
