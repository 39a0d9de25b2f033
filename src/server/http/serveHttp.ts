import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { toNodeHandler } from '@modelcontextprotocol/node';

import type { McpTasks } from '../McpTasks.js';
import type { ServerFactory } from '../ServerLike.js';
import { createTasksHttpHandler, type TasksHttpHandler, type TasksHttpHandlerOptions } from './TasksHttpHandler.js';

export interface ServeHttpOptions extends TasksHttpHandlerOptions {
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default /mcp. */
  path?: string;
  /** Serves the runtime's Prometheus metrics here when it has them (`metrics` option), e.g. `/metrics`. */
  metricsPath?: string;
}

export interface HttpServerHandle {
  url: string;
  port: number;
  handler: TasksHttpHandler;
  server: Server;
  close(): Promise<void>;
}

/** Serves the tasks-enabled MCP server over Streamable HTTP on node:http. */
export async function serveHttp(
  tasks: McpTasks,
  factory: ServerFactory,
  options: ServeHttpOptions = {},
): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const handler = createTasksHttpHandler(tasks, factory, options);
  const node = toNodeHandler(handler as never);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (options.metricsPath !== undefined && url.pathname === options.metricsPath && tasks.metrics) {
      tasks.metrics.text().then(
        (text) => res.writeHead(200, { 'content-type': tasks.metrics?.registry.contentType ?? 'text/plain' }).end(text),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    node(req, res).catch((error: unknown) => {
      tasks.logger.error({ error: String(error) }, 'HTTP request failed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    port,
    handler,
    server,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
