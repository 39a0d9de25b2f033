import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  bridgedRecovery,
  createProxyServerFactory,
  createProxyWork,
  toolRulesOf,
  ToolPolicies,
  UpstreamPool,
} from '../../src/proxy/index.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { startEverythingHttp, type RunningServer } from '../client/helpers/everything.js';
import { BASE_HEADERS, messagesOf, normalized, send, type Answer } from '../helpers/httpExchange.js';

/**
 * The gateway's server in front of @modelcontextprotocol/server-everything over Streamable HTTP, served twice from one
 * tasks runtime: as `mcp-tasks proxy` serves it (fast path, no web Request for its handlers) and with every request
 * the SDK transport's way. Plain traffic forwarded to the upstream gets the same bytes from both.
 */

const silent = { info() {}, warn() {}, error() {} };
let everything: RunningServer;
let upstream: UpstreamPool;
let tasks: McpTasks;
let fast: HttpServerHandle;
let slow: HttpServerHandle;
const sessions = new Map<HttpServerHandle, string>();

async function open(handle: HttpServerHandle): Promise<string> {
  const init = await send(handle.url, {
    headers: BASE_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      // A host that speaks tasks: its plain calls stay plain calls (no fallback tools).
      params: { protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 'gw', version: '1' } },
    }),
  });
  const session = init.headers['mcp-session-id'] as string;
  await send(handle.url, {
    headers: { ...BASE_HEADERS, 'mcp-session-id': session },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return session;
}

async function both(message: Record<string, unknown>): Promise<{ fast: Answer; slow: Answer; served: number }> {
  const before = fast.fastPathServed;
  const to = (handle: HttpServerHandle) =>
    send(handle.url, {
      headers: {
        ...BASE_HEADERS,
        'mcp-session-id': sessions.get(handle) as string,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(message),
    });
  const fastAnswer = await to(fast);
  const slowAnswer = await to(slow);
  return { fast: fastAnswer, slow: slowAnswer, served: fast.fastPathServed - before };
}

beforeAll(async () => {
  everything = await startEverythingHttp();
  upstream = await UpstreamPool.connect({ target: { url: everything.url }, logger: silent });
  const policies = new ToolPolicies(toolRulesOf({}, []));
  const factory = createProxyServerFactory(upstream, policies, { name: 'mcp-tasks-proxy', version: '0.1.0' });
  tasks = await createMcpTasks({
    server: factory,
    tools: (name) => policies.policyFor(name),
    work: (engine, hooks) => createProxyWork(upstream, policies, engine, hooks),
    store: 'memory',
    engine: { recoveryPolicy: bridgedRecovery() },
    fallbackTools: true,
    logger: silent,
  });
  fast = await serveHttp(tasks, { port: 0, fastPath: { webRequest: false } });
  slow = await serveHttp(tasks, { port: 0, fastPath: false });
  for (const handle of [fast, slow]) sessions.set(handle, await open(handle));
});

afterAll(async () => {
  await fast?.close();
  await slow?.close();
  await tasks?.close();
  await upstream?.close();
  await everything?.stop();
});

describe('gateway fast path for plain traffic, in front of server-everything over HTTP', () => {
  it.each([
    ['ping', { method: 'ping' }, '"result":{}'],
    ['a plain tools/call', { method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, 'hi'],
    [
      "a plain call with the upstream's progress on its stream",
      {
        method: 'tools/call',
        params: {
          name: 'trigger-long-running-operation',
          arguments: { duration: 0.3, steps: 3 },
          _meta: { progressToken: 'p1' },
        },
      },
      'notifications/progress',
    ],
    ["the upstream's error", { method: 'tools/call', params: { name: 'nope', arguments: {} } }, 'nope'],
    ['tools/list', { method: 'tools/list' }, 'get-sum'],
    ['resources/templates/list', { method: 'resources/templates/list' }, 'uriTemplate'],
    ['prompts/get', { method: 'prompts/get', params: { name: 'simple-prompt' } }, 'messages'],
  ])('forwards %s with the same bytes as the SDK path', async (_name, message, expected) => {
    const answer = await both({ jsonrpc: '2.0', id: 5, ...message });
    expect(answer.served).toBe(1);
    expect(answer.fast.body).toContain(expected);
    expect(normalized(answer.fast)).toEqual(normalized(answer.slow));
  });

  it("carries the upstream's progress before the response, in order", async () => {
    const answer = await both({
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/call',
      params: {
        name: 'trigger-long-running-operation',
        arguments: { duration: 0.3, steps: 3 },
        _meta: { progressToken: 9 },
      },
    });
    const messages = messagesOf(answer.fast);
    expect(messages.map((m) => m['method'] ?? m['id'])).toEqual([
      'notifications/progress',
      'notifications/progress',
      'notifications/progress',
      6,
    ]);
    expect(messages[0]?.['params']).toMatchObject({ progressToken: 9, progress: 1, total: 3 });
  });

  it('the SDK client answers the upstream question of a plain call, on the fast path', async () => {
    const client = new Client({ name: 'gw-sdk', version: '1.0.0' }, { capabilities: { elicitation: {}, tasks: {} } });
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept',
      content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(fast.url)));
    try {
      const before = fast.fastPathServed;
      const result = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      expect(JSON.stringify(result.content)).toContain('Ada Lovelace');
      expect(fast.fastPathServed - before).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('a plain call the SDK client cancels ends at once, and the session goes on', async () => {
    const client = new Client({ name: 'gw-sdk', version: '1.0.0' }, { capabilities: { tasks: {} } });
    await client.connect(new StreamableHTTPClientTransport(new URL(fast.url)));
    try {
      const abort = new AbortController();
      const started = Date.now();
      const long = client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } },
        { signal: abort.signal },
      );
      setTimeout(() => abort.abort(), 200);
      await expect(long).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(4000);
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'after' } });
      expect(JSON.stringify(echoed.content)).toContain('after');
    } finally {
      await client.close();
    }
  });
});
