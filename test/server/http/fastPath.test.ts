import { request as httpRequest } from 'node:http';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';
import { BASE_HEADERS, messagesOf, normalized, send, type Answer } from '../../helpers/httpExchange.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What each `vigil` call saw: whether its request's signal had aborted. */
const vigils = new Map<string, (aborted: boolean) => void>();

function createServer(): McpServer {
  const server = new McpServer({ name: 'fast-path', version: '1.0.0' });
  server.registerTool(
    'sleep',
    { description: 'Sleeps ms', inputSchema: z.object({ ms: z.number() }) },
    async ({ ms }) => {
      await sleep(ms);
      return { content: [{ type: 'text', text: `slept ${ms}` }] };
    },
  );
  server.registerTool('steps', { inputSchema: z.object({ n: z.number() }) }, async ({ n }, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (let step = 1; step <= n; step++)
      if (progressToken !== undefined)
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: step, total: n, message: `step ${step}` },
        });
    return { content: [{ type: 'text', text: `${n} steps` }] };
  });
  server.registerTool('fail', { inputSchema: z.object({}) }, async () => {
    throw new Error('it failed');
  });
  server.registerTool('whoami', { inputSchema: z.object({}) }, async (_args, ctx) => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({
          tenant: ctx.http?.req?.headers.get('x-tenant') ?? null,
          client: ctx.http?.authInfo?.clientId ?? null,
          session: ctx.sessionId !== undefined,
        }),
      },
    ],
  }));
  server.registerTool('ask', { inputSchema: z.object({ question: z.string() }) }, async ({ question }, ctx) => {
    const schema = { type: 'object' as const, properties: { answer: { type: 'string' as const } } };
    const answer = await ctx.mcpReq.elicitInput({ message: question, requestedSchema: schema } as never);
    return { content: [{ type: 'text', text: `${question} ${JSON.stringify(answer)}` }] };
  });
  // Waits until the client's connection is gone, seen through the web Request handlers get as ctx.http.req.
  server.registerTool('vigil', { inputSchema: z.object({ tag: z.string() }) }, async ({ tag }, ctx) => {
    const signal = ctx.http?.req?.signal;
    if (signal) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    vigils.get(tag)?.(signal?.aborted ?? false);
    return { content: [{ type: 'text', text: 'unreachable' }] };
  });
  // Makes its client poll: the stream is closed before the answer, which the client fetches with Last-Event-ID.
  server.registerTool('poll', { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }, ctx) => {
    ctx.http?.closeSSE?.();
    await sleep(ms);
    return { content: [{ type: 'text', text: `polled after ${ms}` }] };
  });
  server.registerResource('notes', 'notes://today', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'nothing planned' }],
  }));
  server.registerPrompt('greet', { argsSchema: z.object({ name: z.string() }) }, ({ name }) => ({
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `Hello ${name}` } }],
  }));
  return server;
}

describe('fast path for 2025-era sessions: same answers and refusals as the SDK transport', () => {
  let tasks: McpTasks;
  let fast: HttpServerHandle;
  let slow: HttpServerHandle;
  /** Per server: its URL and a session of principal `a`. */
  const peers: Record<'fast' | 'slow', { url: string; session: string; handle: HttpServerHandle }> = {} as never;
  /** The headers of a request on the fast server's session. */
  const fastSessionHeaders = () => ({
    ...BASE_HEADERS,
    authorization: 'Bearer a',
    'mcp-session-id': peers.fast.session,
    'mcp-protocol-version': '2025-11-25',
  });
  /** A plain call of the fixture's `sleep` tool under the JSON-RPC id `id`. */
  const sleepCall = (id: number, ms: number) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms } } });

  const authenticate = (request: Request) => {
    const token = /^Bearer (\w+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
    if (!token)
      return Response.json(
        { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Unauthorized' } },
        { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      );
    return { token, clientId: token, scopes: [] };
  };

  /** A session of principal `token` (a session serves only the principal that opened it). */
  async function open(
    handle: HttpServerHandle,
    capabilities: Record<string, unknown> = {},
    token = 'a',
  ): Promise<string> {
    const init = await send(handle.url, {
      headers: { ...BASE_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'fast-test', version: '1' } },
      }),
    });
    const session = init.headers['mcp-session-id'] as string;
    await send(handle.url, {
      headers: { ...BASE_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    return session;
  }

  /** An SDK client of principal `a` connected to `handle`, accepting each question with the answer `answer` gives. */
  async function askedClient(handle: HttpServerHandle, answer: (message: string) => Promise<string>): Promise<Client> {
    const client = new Client({ name: 'fast-path-sdk', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async (request) => ({
      action: 'accept',
      content: { answer: await answer(String(request.params.message)) },
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(handle.url), {
        requestInit: { headers: { authorization: 'Bearer a' } },
      }),
    );
    return client;
  }

  /** A request on both servers, each in its own session of `a`, unless headers say otherwise. */
  async function both(
    message: Record<string, unknown> | string,
    headers: Record<string, string> = {},
    sessions?: { fast: string; slow: string },
  ): Promise<{ fast: Answer; slow: Answer; served: number }> {
    const before = fast.fastPathServed;
    const body = typeof message === 'string' ? message : JSON.stringify(message);
    const to = (peer: (typeof peers)['fast']) =>
      send(peer.url, {
        headers: {
          ...BASE_HEADERS,
          authorization: 'Bearer a',
          'mcp-session-id': sessions?.[peer === peers.fast ? 'fast' : 'slow'] ?? peer.session,
          'mcp-protocol-version': '2025-11-25',
          ...headers,
        },
        body,
      });
    const fastAnswer = await to(peers.fast);
    const slowAnswer = await to(peers.slow);
    expect(slow.fastPathServed).toBe(0);
    return { fast: fastAnswer, slow: slowAnswer, served: fast.fastPathServed - before };
  }

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { sleep: { taskSupport: 'optional', pollIntervalMs: 60_000 } },
      store: 'memory',
      rateLimit: { perSecond: 1000, burst: 1000, pollBurst: 2 },
    });
    fast = await serveHttp(tasks, { port: 0, authenticate });
    slow = await serveHttp(tasks, { port: 0, authenticate, fastPath: false });
    peers.fast = { url: fast.url, session: await open(fast), handle: fast };
    peers.slow = { url: slow.url, session: await open(slow), handle: slow };
  });
  afterAll(async () => {
    await fast?.close();
    await slow?.close();
    await tasks?.close();
  });

  it('serves the task-augmented tools/call, tasks/get, tasks/result, tasks/list and tasks/cancel with the same bytes', async () => {
    const created = await both({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'sleep', arguments: { ms: 0 }, task: { ttl: 60_000 } },
    });
    expect(created.served).toBe(1);
    expect(normalized(created.fast)).toEqual(normalized(created.slow));
    const taskId = (messagesOf(created.fast)[0]?.['result'] as { task: { taskId: string } }).task.taskId;
    expect(created.fast.headers['content-type']).toBe('text/event-stream');

    // Both sessions belong to principal `a`, so each server answers about the same task.
    const result = await both({ jsonrpc: '2.0', id: 3, method: 'tasks/result', params: { taskId } });
    expect(result.served).toBe(1);
    expect(result.fast.body).toContain('slept 0');
    expect(normalized(result.fast)).toEqual(normalized(result.slow));

    const get = await both({ jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { taskId } });
    expect(get.served).toBe(1);
    expect(normalized(get.fast)).toEqual(normalized(get.slow));
    expect(messagesOf(get.fast)[0]?.['result']).toMatchObject({ taskId, status: 'completed' });

    const list = await both({ jsonrpc: '2.0', id: 5, method: 'tasks/list', params: {} });
    expect(list.served).toBe(1);
    expect(normalized(list.fast)).toEqual(normalized(list.slow));

    const cancel = await both({ jsonrpc: '2.0', id: 6, method: 'tasks/cancel', params: { taskId } });
    expect(cancel.served).toBe(1);
    expect(normalized(cancel.fast)).toEqual(normalized(cancel.slow));
    expect(messagesOf(cancel.fast)[0]?.['error']).toMatchObject({ code: -32602 });

    // spec R64: another principal (in a session of its own) gets exactly what a missing task gets.
    const sessionsOfB = { fast: await open(fast, {}, 'b'), slow: await open(slow, {}, 'b') };
    const other = await both(
      { jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { taskId } },
      { authorization: 'Bearer b' },
      sessionsOfB,
    );
    const missing = await both({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { taskId: 'nope' } });
    expect(normalized(other.fast)).toEqual(normalized(missing.fast));
    expect(normalized(other.fast)).toEqual(normalized(other.slow));
  });

  it.each([
    ['ping', { method: 'ping' }, '{}'],
    ['a plain tools/call', { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 } } }, 'slept 0'],
    [
      'a plain tools/call with progress on its stream',
      { method: 'tools/call', params: { name: 'steps', arguments: { n: 3 }, _meta: { progressToken: 'p1' } } },
      'step 3',
    ],
    [
      'a tool that throws (an isError result)',
      { method: 'tools/call', params: { name: 'fail', arguments: {} } },
      'it failed',
    ],
    ['an unknown tool', { method: 'tools/call', params: { name: 'nope', arguments: {} } }, 'nope'],
    ['arguments the schema refuses', { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 'x' } } }, 'ms'],
    ['tools/call without params', { method: 'tools/call' }, '-32602'],
    [
      "the handler's view of the request (ctx.http.req, authInfo, session)",
      { method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      '\\"tenant\\":\\"blue\\",\\"client\\":\\"a\\",\\"session\\":true',
    ],
    ['tools/list', { method: 'tools/list' }, 'whoami'],
    ['resources/list', { method: 'resources/list' }, 'notes://today'],
    ['resources/read', { method: 'resources/read', params: { uri: 'notes://today' } }, 'nothing planned'],
    ['prompts/get', { method: 'prompts/get', params: { name: 'greet', arguments: { name: 'Ada' } } }, 'Hello Ada'],
    ['a method the server lacks', { method: 'completion/complete', params: {} }, '-32601'],
  ])('answers %s on the fast path with the same bytes as the SDK path', async (_name, message, expected) => {
    const answer = await both({ jsonrpc: '2.0', id: 9, ...message }, { 'x-tenant': 'blue' });
    expect(answer.served).toBe(1);
    expect(answer.fast.status).toBe(200);
    expect(answer.fast.body).toContain(expected);
    expect(normalized(answer.fast)).toEqual(normalized(answer.slow));
  });

  it('answers a plain call of a client on 2025-06-18 (a stream without priming event) with the same bytes', async () => {
    const answer = await both(
      { jsonrpc: '2.0', id: 19, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 } } },
      { 'mcp-protocol-version': '2025-06-18' },
    );
    expect(answer.served).toBe(1);
    expect(answer.fast.body).toMatch(/^event: message\nid: /);
    expect(normalized(answer.fast)).toEqual(normalized(answer.slow));
  });

  it("keeps the order of a plain call's progress and response on its stream", async () => {
    const answer = await both({
      jsonrpc: '2.0',
      id: 20,
      method: 'tools/call',
      params: { name: 'steps', arguments: { n: 2 }, _meta: { progressToken: 7 } },
    });
    expect(messagesOf(answer.fast).map((message) => message['method'] ?? message['id'])).toEqual([
      'notifications/progress',
      'notifications/progress',
      20,
    ]);
  });

  it('a handler closing its stream (closeSSE) lets the client resume it with Last-Event-ID, as on the SDK path', async () => {
    const answers: Record<'fast' | 'slow', Answer[]> = { fast: [], slow: [] };
    const before = fast.fastPathServed;
    for (const name of ['fast', 'slow'] as const) {
      const peer = peers[name];
      const headers = {
        ...BASE_HEADERS,
        authorization: 'Bearer a',
        'mcp-session-id': peer.session,
        'mcp-protocol-version': '2025-11-25',
      };
      const closed = await send(peer.url, {
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 21,
          method: 'tools/call',
          params: { name: 'poll', arguments: { ms: 300 } },
        }),
      });
      const primingId = /^id: (\S+)$/m.exec(closed.body)?.[1] as string;
      const resumed = await send(peer.url, {
        method: 'GET',
        headers: { ...headers, accept: 'text/event-stream', 'last-event-id': primingId },
      });
      answers[name].push(closed, resumed);
    }
    expect(fast.fastPathServed - before).toBe(1);
    expect(answers.fast[0]?.body).not.toContain('polled');
    expect(messagesOf(answers.fast[1] as Answer)).toEqual([
      expect.objectContaining({ id: 21, result: { content: [{ type: 'text', text: 'polled after 300' }] } }),
    ]);
    expect(answers.fast.map(normalized)).toEqual(answers.slow.map(normalized));
  });

  it('the SDK client answers a question a plain call asks on its stream, on both paths alike', async () => {
    const results: unknown[] = [];
    for (const handle of [fast, slow]) {
      const client = await askedClient(handle, async (message) => `yes to ${message}`);
      try {
        const before = handle.fastPathServed;
        results.push(await client.callTool({ name: 'ask', arguments: { question: 'Proceed?' } }));
        expect(handle.fastPathServed - before).toBe(handle === fast ? 1 : 0);
      } finally {
        await client.close();
      }
    }
    expect(results[0]).toEqual({
      content: [{ type: 'text', text: 'Proceed? {"action":"accept","content":{"answer":"yes to Proceed?"}}' }],
    });
    expect(results[0]).toEqual(results[1]);
  });

  it("a question asked through ctx.mcpReq.elicitInput goes on the call's own stream: a client that never opened the GET stream gets it, on both paths alike", async () => {
    // The SDK sends such a question without relating it to the call; unrelated, it would wait for a GET stream.
    const transcripts: string[] = [];
    for (const handle of [fast, slow]) {
      const session = await open(handle, { elicitation: {} });
      const headers = {
        ...BASE_HEADERS,
        authorization: 'Bearer a',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      };
      const before = handle.fastPathServed;
      const call = await fetch(handle.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 40,
          method: 'tools/call',
          params: { name: 'ask', arguments: { question: 'Ship it?' } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      const reader = (call.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      let answered = false;
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        text += chunk.value;
        const question = /^data: (\{.*"elicitation\/create".*\})$/m.exec(text)?.[1];
        if (question && !answered) {
          answered = true;
          const { id } = JSON.parse(question) as { id: number };
          const reply = await send(handle.url, {
            headers,
            body: JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'accept', content: { answer: 'ship' } } }),
          });
          expect(reply.status).toBe(202);
        }
      }
      expect(answered).toBe(true);
      expect(handle.fastPathServed - before).toBe(handle === fast ? 1 : 0);
      transcripts.push(text);
    }
    const messages = transcripts.map((body) =>
      messagesOf({ status: 200, headers: { 'content-type': 'text/event-stream' }, body }),
    );
    expect(messages[0]).toEqual([
      expect.objectContaining({
        method: 'elicitation/create',
        params: expect.objectContaining({ message: 'Ship it?' }),
      }),
      {
        jsonrpc: '2.0',
        id: 40,
        result: { content: [{ type: 'text', text: 'Ship it? {"action":"accept","content":{"answer":"ship"}}' }] },
      },
    ]);
    expect(messages[1]).toEqual(messages[0]);
  });

  it("a plain call's ctx.http.req.signal aborts when its client goes away, on both paths alike", async () => {
    for (const peer of [peers.fast, peers.slow]) {
      const tag = peer === peers.fast ? 'fast' : 'slow';
      const seen = new Promise<boolean>((resolve) => vigils.set(tag, resolve));
      await send(peer.url, {
        headers: {
          ...BASE_HEADERS,
          authorization: 'Bearer a',
          'mcp-session-id': peer.session,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 41,
          method: 'tools/call',
          params: { name: 'vigil', arguments: { tag } },
        }),
        dropAfterPriming: true,
      });
      await expect(seen).resolves.toBe(true);
    }
  });

  it('two plain calls of one session asking at once both get their answers (a question asked while both are in flight goes unrelated, on the GET stream)', async () => {
    for (const handle of [fast, slow]) {
      const asked: string[] = [];
      let release: () => void = () => {};
      const both = new Promise<void>((resolve) => (release = resolve));
      const client = await askedClient(handle, async (message) => {
        asked.push(message);
        // Each question waits for the other, so both calls are in flight when either asks.
        if (asked.length === 2) release();
        await both;
        return `yes to ${message}`;
      });
      try {
        const results = await Promise.all(
          ['First?', 'Second?'].map((question) => client.callTool({ name: 'ask', arguments: { question } })),
        );
        expect(results.map((result) => (result.content as Array<{ text: string }>)[0]?.text)).toEqual([
          'First? {"action":"accept","content":{"answer":"yes to First?"}}',
          'Second? {"action":"accept","content":{"answer":"yes to Second?"}}',
        ]);
        expect(asked.sort()).toEqual(['First?', 'Second?']);
      } finally {
        await client.close();
      }
    }
  });

  it('a cancelled plain call gets no answer, and its id may be used again', async () => {
    const headers = fastSessionHeaders();
    const call = (ms: number) => sleepCall(22, ms);
    const before = fast.fastPathServed;
    const cancelled = send(fast.url, { headers, body: call(400), dropAfterPriming: true });
    await sleep(50);
    const notice = await send(fast.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 22 } }),
    });
    expect(notice.status).toBe(202);
    expect((await cancelled).body).not.toContain('slept');
    // Its entry went with the cancellation: the same id is served on the fast path again, with its own answer.
    const again = await send(fast.url, { headers, body: call(0) });
    expect(fast.fastPathServed - before).toBe(2);
    expect(messagesOf(again)).toEqual([expect.objectContaining({ id: 22, result: expect.anything() })]);
    expect(again.body).toContain('slept 0');
  });

  it("a request whose id is still in flight on the fast path goes the SDK's way", async () => {
    const headers = fastSessionHeaders();
    const call = (ms: number) => sleepCall(23, ms);
    const before = fast.fastPathServed;
    const first = send(fast.url, { headers, body: call(100) });
    await sleep(20);
    const second = send(fast.url, { headers, body: call(300) });
    expect((await first).body).toContain('slept 100');
    expect((await second).body).toContain('slept 300');
    expect(fast.fastPathServed - before).toBe(1);
  });

  it("with plainRequests off, plain traffic goes the SDK's way and task traffic still takes the fast path", async () => {
    const tasksOnly = await serveHttp(tasks, {
      port: 0,
      authenticate,
      fastPath: { plainRequests: false },
    });
    try {
      const session = await open(tasksOnly);
      const headers = {
        ...BASE_HEADERS,
        authorization: 'Bearer a',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      };
      const plain = await send(tasksOnly.url, {
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 24,
          method: 'tools/call',
          params: { name: 'sleep', arguments: { ms: 0 } },
        }),
      });
      expect(plain.body).toContain('slept 0');
      expect(tasksOnly.fastPathServed).toBe(0);
      const created = await send(tasksOnly.url, {
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 25,
          method: 'tools/call',
          params: { name: 'sleep', arguments: { ms: 0 }, task: {} },
        }),
      });
      expect(messagesOf(created)[0]?.['result']).toMatchObject({ task: { status: 'working' } });
      expect(tasksOnly.fastPathServed).toBe(1);
    } finally {
      await tasksOnly.close();
    }
  });

  it('with webRequest off, a handler answered on the fast path sees no ctx.http.req, and the rest as before', async () => {
    const bare = await serveHttp(tasks, { port: 0, authenticate, fastPath: { webRequest: false } });
    try {
      const session = await open(bare);
      const answer = await send(bare.url, {
        headers: {
          ...BASE_HEADERS,
          authorization: 'Bearer a',
          'x-tenant': 'blue',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 26,
          method: 'tools/call',
          params: { name: 'whoami', arguments: {} },
        }),
      });
      expect(bare.fastPathServed).toBe(1);
      // With an authenticate hook there is a web Request anyway (the hook's), so the handler still sees it.
      expect(answer.body).toContain('\\"tenant\\":\\"blue\\"');
    } finally {
      await bare.close();
    }
  });

  it.each([
    ['an unknown session id', {}, { 'mcp-session-id': 'not-a-session' }, 404],
    ['no credentials', {}, { authorization: '' }, 401],
    ['a foreign Origin', {}, { origin: 'https://evil.example' }, 403],
    ['a rebound Host', {}, { host: 'evil.example' }, 403],
    ['an unsupported protocol version header', {}, { 'mcp-protocol-version': '1999-01-01' }, 400],
    ['a content type other than JSON', {}, { 'content-type': 'text/plain' }, 415],
    ['an Accept without text/event-stream', {}, { accept: 'application/json' }, 406],
    ['params that are not an object', { params: 'x' }, {}, 400],
    ['an id that is not an integer', { id: 1.5 }, {}, 400],
  ])('refuses %s exactly as the SDK path does, for task and plain traffic', async (_name, change, headers, status) => {
    for (const request of [
      { method: 'tasks/get', params: { taskId: 'x' } },
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 } } },
      { method: 'ping' },
    ]) {
      const message = { jsonrpc: '2.0', id: 10, ...request, ...change };
      const answer = await both(message, headers as Record<string, string>);
      expect(answer.served, request.method).toBe(0);
      expect(answer.fast.status, request.method).toBe(status);
      expect(normalized(answer.fast), request.method).toEqual(normalized(answer.slow));
    }
  });

  it('refuses malformed JSON and an oversized body exactly as the SDK path does', async () => {
    const malformed = await both('{"jsonrpc":"2.0","id":11,"method":"tasks/get"');
    expect(malformed.fast.status).toBe(400);
    expect(normalized(malformed.fast)).toEqual(normalized(malformed.slow));
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 12,
      method: 'tasks/get',
      params: { taskId: 'x', pad: 'x'.repeat(5 * 1024 * 1024) },
    });
    const oversized = await both(huge);
    expect(oversized.fast.status).toBe(413);
    expect(normalized(oversized.fast)).toEqual(normalized(oversized.slow));
    expect(malformed.served + oversized.served).toBe(0);
  });

  it('applies the rate limit (spec R69) with the same JSON-RPC error', async () => {
    // Principals of their own per server, so each server's caller has its own quota.
    const answers: Answer[][] = [[], []];
    for (const [index, peer] of [peers.fast, peers.slow].entries()) {
      const token = `rate${index}`;
      const headers = {
        ...BASE_HEADERS,
        authorization: `Bearer ${token}`,
        'mcp-session-id': await open(peer.handle, {}, token),
        'mcp-protocol-version': '2025-11-25',
      };
      const created = await send(peer.url, {
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 13,
          method: 'tools/call',
          params: { name: 'sleep', arguments: { ms: 0 }, task: {} },
        }),
      });
      const taskId = (messagesOf(created)[0]?.['result'] as { task: { taskId: string } }).task.taskId;
      // Finished first (a wait, not a poll), so every poll sees the same status on both servers.
      await send(peer.url, {
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 15, method: 'tasks/result', params: { taskId } }),
      });
      for (let i = 0; i < 4; i++)
        answers[index]?.push(
          await send(peer.url, {
            headers,
            body: JSON.stringify({ jsonrpc: '2.0', id: 14, method: 'tasks/get', params: { taskId } }),
          }),
        );
    }
    const [fastAnswers, slowAnswers] = answers as [Answer[], Answer[]];
    const refused = fastAnswers.at(-1) as Answer;
    expect(messagesOf(refused)[0]?.['error']).toMatchObject({ code: expect.any(Number) });
    expect(fastAnswers.map(normalized)).toEqual(slowAnswers.map(normalized));
  });

  it('resumes a dropped tasks/result stream with Last-Event-ID and delivers its response', async () => {
    const headers = fastSessionHeaders();
    const created = await send(fast.url, {
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 15,
        method: 'tools/call',
        params: { name: 'sleep', arguments: { ms: 600 }, task: {} },
      }),
    });
    const taskId = (messagesOf(created)[0]?.['result'] as { task: { taskId: string } }).task.taskId;
    const dropped = await send(fast.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 16, method: 'tasks/result', params: { taskId } }),
      dropAfterPriming: true,
    });
    const primingId = /^id: (\S+)$/m.exec(dropped.body)?.[1] as string;
    expect(primingId).toBeDefined();
    expect(dropped.body).not.toContain('slept');
    // Another principal holding the session id and the event id resumes nothing: the session is not found for it.
    const stolen = await send(fast.url, {
      method: 'GET',
      headers: { ...headers, authorization: 'Bearer b', accept: 'text/event-stream', 'last-event-id': primingId },
    });
    expect(stolen.status).toBe(404);
    expect(JSON.parse(stolen.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Session not found' },
    });
    const resumed = await send(fast.url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': primingId },
    });
    expect(resumed.status).toBe(200);
    expect(messagesOf(resumed)).toEqual([
      expect.objectContaining({
        id: 16,
        result: expect.objectContaining({ content: [{ type: 'text', text: 'slept 600' }] }),
      }),
    ]);
  });
  /** The response's body chunks as they arrive, with the time each came (ms after the request was sent). */
  function chunksOf(body: string): Promise<{ headersAt: number; chunks: Array<{ at: number; text: string }> }> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const request = httpRequest(fast.url, { method: 'POST', headers: fastSessionHeaders() }, (response) => {
        const headersAt = performance.now() - started;
        const chunks: Array<{ at: number; text: string }> = [];
        response.setEncoding('utf8');
        response.on('data', (text: string) => chunks.push({ at: performance.now() - started, text }));
        response.on('end', () => resolve({ headersAt, chunks }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  it('sends an answer that comes soon with the headers, in one write', async () => {
    const { headersAt, chunks } = await chunksOf(sleepCall(31, 30));
    expect(chunks).toHaveLength(1);
    const [only] = chunks as [{ at: number; text: string }];
    expect(only.text).toMatch(/^id: \S+\nretry: \d+\ndata: \n\n/);
    expect(only.text).toContain('slept 30');
    expect(headersAt).toBeGreaterThanOrEqual(25);
  });

  it('opens the stream of a longer request before its answer; progress before a soon answer keeps its order', async () => {
    const long = await chunksOf(sleepCall(32, 700));
    expect(long.headersAt).toBeLessThan(500);
    expect(long.chunks[0]?.text).toMatch(/^id: \S+\nretry: \d+\ndata: \n\n$/);
    expect(long.chunks.at(-1)?.text).toContain('slept 700');
    expect(long.chunks.at(-1)?.at).toBeGreaterThanOrEqual(650);

    const progress = await chunksOf(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 33,
        method: 'tools/call',
        params: { name: 'steps', arguments: { n: 2 }, _meta: { progressToken: 'p' } },
      }),
    );
    const text = progress.chunks.map((chunk) => chunk.text).join('');
    expect(text.indexOf('step 1')).toBeLessThan(text.indexOf('2 steps'));
  });
});
