import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import type { ModernPeer } from '../helpers/rawWire.js';
import { createEventsServer, EVENT_TYPES, STAGE } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token === 'alice' || token === 'bob' ? { token, clientId: token, scopes: [] } : undefined;
}
const as = (who: string) => ({ authorization: `Bearer ${who}` });

/**
 * events/* on the 2026-07-28 wire are answered by the runtime's events front without an instance of the author's
 * server: an open events/stream holds no server (its tools and schemas) for its life.
 */
describe('events/* on the 2026-07-28 wire without a server instance per request', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let built = 0;
  let alice: ModernPeer;
  let bob: ModernPeer;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: () => {
        built++;
        return createEventsServer();
      },
      tools: { staged: { taskSupport: 'optional', pollIntervalMs: 100 } },
      store: 'memory',
      events: { types: EVENT_TYPES, heartbeatMs: 300 },
    });
    http = await serveHttp(tasks, { port: 0, authenticate: authenticate as never });
    alice = eventsPeer(http.url, as('alice'));
    bob = eventsPeer(http.url, as('bob'));
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  async function staged(): Promise<{ taskId: string; cursor: string }> {
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 1, stageMs: 1 } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const source = created.result?.['eventSource'] as Record<string, string>;
    return { taskId: created.result?.['taskId'] as string, cursor: source['initialCursor'] as string };
  }

  it('streams, polls and lists without calling the server factory', async () => {
    const { taskId, cursor } = await staged();
    const before = built;
    const stream = await openStream(http.url, { name: STAGE, arguments: { taskId }, cursor }, { headers: as('alice') });
    expect(stream.contentType).toContain('text/event-stream');
    await stream.next(method('notifications/events/active'));
    await stream.next(method('notifications/events/event'));
    const polled = await alice.request('events/poll', { name: STAGE, arguments: { taskId }, cursor });
    expect(polled.error, JSON.stringify(polled.error)).toBeUndefined();
    expect((polled.result?.['events'] as unknown[]).length).toBe(1);
    expect((await alice.request('events/list')).result?.['events']).toBeDefined();
    expect(built).toBe(before);
    stream.close();
    await stream.done;
  });

  it('TS11: a second caller gets exactly what a missing task gets, on this path too', async () => {
    const { taskId } = await staged();
    const before = built;
    const missingId = '00000000-0000-4000-8000-000000000000';
    const foreign = await openStream(http.url, { name: STAGE, arguments: { taskId } }, { headers: as('bob') });
    const missing = await openStream(
      http.url,
      { name: STAGE, arguments: { taskId: missingId } },
      { headers: as('bob') },
    );
    await Promise.all([foreign.done, missing.done]);
    expect(foreign.status).toBe(missing.status);
    expect(foreign.contentType).toBe(missing.contentType);
    const error = (stream: typeof foreign) => stream.messages[0]?.['error'] as Record<string, unknown> | undefined;
    expect(error(foreign)).toBeDefined();
    expect({ ...error(foreign), data: undefined, message: undefined }).toEqual({
      ...error(missing),
      data: undefined,
      message: undefined,
    });
    expect(String(error(foreign)?.['message']).replaceAll(taskId, missingId)).toBe(error(missing)?.['message']);
    const polled = await bob.request('events/poll', { name: STAGE, arguments: { taskId } });
    expect(polled.error?.code).toBe(error(missing)?.['code']);
    expect(built).toBe(before);
  });

  it('leaves what the SDK ladder refuses to it: a missing Mcp-Method header is its error', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'events/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'events-test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error?: { message?: string } };
    expect(body.error?.message).toMatch(/Mcp-Method/);
  });
});
