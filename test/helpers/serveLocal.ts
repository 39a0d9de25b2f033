import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface LocalHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  close(): void;
}

/** Serves `handle` on a free port of 127.0.0.1; a handler that throws before answering yields a 500. */
export async function serveLocal(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<LocalHttpServer> {
  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const address = http.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp`,
    close() {
      http.closeAllConnections();
      http.close();
    },
  };
}
