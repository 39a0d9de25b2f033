import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { nodeEventStreamsOf } from '../../src/server/http/TasksHttpHandler.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { createEventsServer, EVENT_TYPES, gates, STAGE } from './eventsServer.js';
import { EVENTS, eventsPeer, method, openStream } from './eventsPeer.js';

function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  if (token === 'refused') return new Response('no', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
  return token === 'alice' || token === 'bob' ? { token, clientId: token, scopes: [] } : undefined;
}
const as = (who: string) => ({ authorization: `Bearer ${who}` });

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * `events/stream` served by serveHttp is written straight to node's response (src/server/http/NodeEventStreams.ts);
 * the same request given to the handler's `fetch` takes the SDK's per-request transport (ModernEventsPath). Both must
 * answer alike, byte for byte where timing allows: the same status, headers and SSE framing.
 */
describe('events/stream on node:http answers as the SDK transport does', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createEventsServer,
      tools: { staged: { taskSupport: 'optional', pollIntervalMs: 100 } },
      store: 'memory',
      events: { types: EVENT_TYPES, heartbeatMs: 60_000, maxStreamsPerOwner: 2 },
    });
    http = await serveHttp(tasks, { port: 0, authenticate: authenticate as never });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  function init(params: Record<string, unknown>, headers: Record<string, string>, id: string | number): RequestInit {
    return {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'events/stream',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'events/stream',
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'events-test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS]: {} } },
          },
        },
      }),
    };
  }

  async function read(response: Response): Promise<Answer> {
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    delete headers['date'];
    delete headers['keep-alive'];
    delete headers['transfer-encoding'];
    // node:http says keep-alive on every answer of a kept connection; a web Response only carries the SSE one's.
    if (headers['content-type'] !== 'text/event-stream') delete headers['connection'];
    return { status: response.status, headers, text: await response.text() };
  }

  /** The same request by node:http (this path) and by the handler's fetch (the SDK's transport). */
  async function both(params: Record<string, unknown>, headers: Record<string, string>): Promise<[Answer, Answer]> {
    const served = nodeEventStreamsOf(http.handler)?.served ?? 0;
    const node = fetch(http.url, init(params, headers, 7)).then(read);
    const web = http.handler
      .fetch(new Request(http.url, init(params, { host: new URL(http.url).host, ...headers }, 7)))
      .then(read);
    const answers = await Promise.all([node, web]);
    // The node request took this path, not the handler's way.
    expect(nodeEventStreamsOf(http.handler)?.served).toBe(served + 1);
    return answers;
  }

  async function staged(stages: number, stageMs: number): Promise<{ taskId: string; cursor: string }> {
    const peer = eventsPeer(http.url, as('alice'));
    const created = await peer.request('tools/call', { name: 'staged', arguments: { stages, stageMs } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const source = created.result?.['eventSource'] as Record<string, string>;
    return { taskId: created.result?.['taskId'] as string, cursor: source['initialCursor'] as string };
  }

  it('V43-V49 TS8: a whole stream, active to the final frame, has the same headers and frames', async () => {
    const { taskId, cursor } = await staged(3, 150);
    const [node, web] = await both({ name: STAGE, arguments: { taskId }, cursor }, as('alice'));
    expect(node.status).toBe(200);
    expect(node.headers).toEqual(web.headers);
    expect(node.headers['content-type']).toBe('text/event-stream');
    const frames = (answer: Answer) => answer.text.split('\n\n').filter((frame) => frame !== '');
    for (const frame of frames(node)) expect(frame).toMatch(/^event: message\ndata: \{.*\}$/);
    const methods = (answer: Answer) =>
      frames(answer).map(
        (frame) => (JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as { method?: string }).method,
      );
    expect(methods(node)).toEqual(methods(web));
    expect(methods(node)).toEqual([
      'notifications/events/active',
      'notifications/events/event',
      'notifications/events/event',
      'notifications/events/event',
      'notifications/events/terminated',
      undefined,
    ]);
    // The same events, cursors, subscription id and final result.
    expect(node.text).toBe(web.text);
  });

  it('keeps a quiet stream alive with an SSE comment within 15 s of its opening', async () => {
    const peer = eventsPeer(http.url, as('alice'));
    const created = await peer.request('tools/call', {
      name: 'staged',
      arguments: { stages: 0, stageMs: 0, gate: 'node-keepalive' },
    });
    const taskId = created.result?.['taskId'] as string;
    const controller = new AbortController();
    const opened = Date.now();
    const response = await fetch(http.url, {
      ...init({ name: STAGE, arguments: { taskId }, cursor: null }, as('alice'), 'keepalive'),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      // The heartbeat notification is a minute away (heartbeatMs above): only the transport's comment comes sooner.
      while (!text.includes('\n: keepalive\n\n') && !text.startsWith(': keepalive\n\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toMatch(/(^|\n): keepalive\n\n/);
      // Every 15 s by the shared timer (generous bound for a loaded machine), not the minute of the heartbeat.
      expect(Date.now() - opened).toBeLessThan(30_000);
    } finally {
      controller.abort();
      gates.get('node-keepalive')();
    }
  }, 45_000);

  it('V44: a refusal before the stream opens is the same JSON answer (unknown type, foreign task)', async () => {
    const { taskId } = await staged(1, 1);
    for (const [params, who] of [
      [{ name: 'com.example.unknown', arguments: { taskId } }, 'alice'],
      [{ name: STAGE, arguments: { taskId } }, 'bob'],
      [{ name: STAGE, arguments: { taskId: 'not-a-task' } }, 'bob'],
    ] as const) {
      const [node, web] = await both(params, as(who));
      expect(node.headers['content-type']).toBe('application/json');
      expect(node).toEqual(web);
    }
  });

  it('an authenticate hook refusing the request answers with its Response', async () => {
    const { taskId } = await staged(1, 1);
    const [node, web] = await both({ name: STAGE, arguments: { taskId } }, as('refused'));
    expect(node.status).toBe(401);
    expect(node).toEqual(web);
  });

  it('leaves to the handler what it does not take: another events method, a mismatched Mcp-Method', async () => {
    const served = nodeEventStreamsOf(http.handler)?.served;
    const { taskId } = await staged(1, 1);
    const peer = eventsPeer(http.url, as('alice'));
    expect((await peer.request('events/list')).result?.['events']).toBeDefined();
    const mismatched = await fetch(http.url, init({ name: STAGE, arguments: { taskId } }, { 'mcp-method': 'x' }, 1));
    expect(mismatched.status).toBe(400);
    expect(nodeEventStreamsOf(http.handler)?.served).toBe(served);
  });

  it('fastPath false sends events/stream the SDK way', async () => {
    const sdkWay = await serveHttp(tasks, { port: 0, authenticate: authenticate as never, fastPath: false });
    try {
      const { taskId, cursor } = await staged(1, 1);
      const stream = await openStream(
        sdkWay.url,
        { name: STAGE, arguments: { taskId }, cursor },
        { headers: as('alice') },
      );
      await stream.done;
      expect(stream.messages.map((message) => message.method).at(-2)).toBe('notifications/events/terminated');
      expect(nodeEventStreamsOf(sdkWay.handler)?.served).toBe(0);
    } finally {
      await sdkWay.close();
    }
  });

  it('TS13: a stream the client closes gives its place back', async () => {
    const { taskId } = await staged(1, 60_000);
    const open = () => openStream(http.url, { name: STAGE, arguments: { taskId } }, { headers: as('alice') });
    const first = await open();
    const second = await open();
    await first.next(method('notifications/events/active'));
    await second.next(method('notifications/events/active'));
    const third = await open();
    await third.done;
    expect((third.messages[0]?.['error'] as { code?: number } | undefined)?.code).toBe(-32013);
    first.close();
    await first.done;
    // The server sees the close when the connection's end reaches it: retry until it has.
    for (;;) {
      const again = await open();
      if (again.contentType.includes('text/event-stream')) {
        await again.next(method('notifications/events/active'));
        again.close();
        break;
      }
      await again.done;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    second.close();
  });
});
