// The demo: a task-capable MCP server on the embedded SQLite store. `npm start` runs it on http://127.0.0.1:3000/mcp.
import { fileURLToPath } from 'node:url';

import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { pino } from 'pino';

import { createMcpTasks, guardStdin, serveHttp, type BearerAuth, type McpTasks } from 'mcp-tasks';
import { DEMO_EVENT_TYPES } from './demoEvents.js';
import { createDemoServer, DEMO_POLICIES } from './demoTools.js';

export interface DemoServerOptions {
  port?: number;
  host?: string;
  stdio?: boolean;
  /** Store spec; default ./mcp-tasks.db (SQLite). */
  store?: string;
  /** `index_directory` reads only under this directory. Default: MCP_TASKS_DEMO_ROOT, else the working directory. */
  root?: string;
  /** Bearer authentication for HTTP, e.g. `jwtAuth({...})`. Default: none (anonymous callers). */
  auth?: BearerAuth;
}

export interface DemoServer {
  tasks: McpTasks;
  url?: string;
  /** Opens the operator's console (its token in the URL, once). */
  consoleUrl?: string;
  close(): Promise<void>;
}

/** Starts the demo server over HTTP (default) or stdio. */
export async function startDemoServer(options: DemoServerOptions = {}): Promise<DemoServer> {
  // Logs go to stderr: on stdio, stdout is the protocol channel.
  const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'info' }, pino.destination({ dest: 2, sync: true }));
  const root = options.root ?? process.env['MCP_TASKS_DEMO_ROOT'] ?? process.cwd();
  const server = () => createDemoServer({ root });
  const tasks = await createMcpTasks({
    server,
    tools: DEMO_POLICIES,
    store: options.store ?? process.env['MCP_TASKS_STORE'] ?? './mcp-tasks.db',
    logger,
    metrics: true,
    // The long tools' intermediate results, served on the 2026-07-28 wire (poll and push; docs/events.md).
    events: { types: DEMO_EVENT_TYPES },
  });
  if (options.stdio) {
    await tasks
      .attach(server())
      .connect(new StdioServerTransport(guardStdin(process.stdin, process.stdout, { logger }), process.stdout));
    return { tasks, close: () => tasks.close() };
  }
  const http = await serveHttp(tasks, {
    port: options.port ?? 3000,
    host: options.host ?? '127.0.0.1',
    metricsPath: '/metrics',
    // The operator's console, behind its token (MCP_TASKS_CONSOLE_TOKEN, else generated and printed below).
    console: { path: '/console' },
    ...options.auth,
  });
  return {
    tasks,
    url: http.url,
    ...(http.console && { consoleUrl: http.console.openUrl(new URL(http.url).origin) }),
    async close() {
      await http.close();
      await tasks.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stdio = process.argv.includes('--stdio');
  const demo = await startDemoServer({
    stdio,
    port: Number(process.env['PORT'] ?? 3000),
    host: process.env['HOST'] ?? '127.0.0.1',
  }).catch((error: unknown) => {
    // One line naming what failed (the store, the port), not a stack trace.
    console.error(`mcp-tasks demo server: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
  if (demo.url) {
    console.log(
      `mcp-tasks demo server: ${demo.url}  (tasks stored in ${process.env['MCP_TASKS_STORE'] ?? './mcp-tasks.db'})`,
    );
    console.log(`Try it:  node dist/src/cli/main.js --url ${demo.url} call index_directory path=src delayMs=20`);
    if (demo.consoleUrl) console.log(`Console: ${demo.consoleUrl}`);
  }
  const stop = () => void demo.close().finally(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
