// The conformance fixture server: `npm run serve:conformance` (HTTP on 127.0.0.1:$PORT/mcp) or `--stdio`.
// Store from MCP_TASKS_STORE (memory, a SQLite path; default: SQLite in a temporary directory).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { createFixtureServer, FIXTURE_POLICIES } from './fixtureTools.js';

const store = process.env['MCP_TASKS_STORE'] ?? join(mkdtempSync(join(tmpdir(), 'mcp-tasks-fixture-')), 'tasks.db');
const tasks = await createMcpTasks({
  server: createFixtureServer,
  tools: FIXTURE_POLICIES,
  store,
  bindToSession: process.env['MCP_TASKS_BIND_TO_SESSION'] === '1',
  limits: { ...(process.env['MCP_TASKS_MAX_TTL_MS'] && { maxTtlMs: Number(process.env['MCP_TASKS_MAX_TTL_MS']) }) },
  engine: { ...(process.env['MCP_TASKS_LEASE_MS'] && { leaseMs: Number(process.env['MCP_TASKS_LEASE_MS']) }) },
});

const shutdown = async () => {
  await tasks.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

if (process.argv.includes('--stdio')) {
  await tasks.attach(createFixtureServer()).connect(new StdioServerTransport());
} else {
  const tokens = parseTokens(process.env['MCP_TASKS_TEST_TOKENS']);
  const handle = await serveHttp(tasks, createFixtureServer, {
    port: Number(process.env['PORT'] ?? 3001),
    host: '127.0.0.1',
    ...(tokens && {
      authenticate: (request: Request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /i, '');
        const clientId = token === undefined ? undefined : tokens.get(token);
        return clientId ? { token: token as string, clientId, scopes: [] } : undefined;
      },
    }),
  });
  console.error(`mcp-tasks fixture server listening on ${handle.url}`);
}

/** `token:client,token:client` — static bearer tokens for tests of owner scoping. */
function parseTokens(spec: string | undefined): Map<string, string> | undefined {
  if (!spec) return undefined;
  return new Map(spec.split(',').map((pair) => pair.split(':') as [string, string]));
}
