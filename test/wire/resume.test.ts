import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, eventually, type HttpPeer } from '../helpers/rawWire.js';

/** Reads SSE events (id and data) from a response until `until` says stop. */
async function readEvents(response: Response, until: (events: Array<{ id?: string; data?: string }>) => boolean) {
  const events: Array<{ id?: string; data?: string }> = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary: number;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const event: { id?: string; data?: string } = {};
      for (const line of buffer.slice(0, boundary).split('\n')) {
        if (line.startsWith('id:')) event.id = line.slice(3).trim();
        if (line.startsWith('data:')) event.data = line.slice(5).trim();
      }
      buffer = buffer.slice(boundary + 2);
      events.push(event);
    }
  }
  return { events, cancel: () => reader.cancel().catch(() => {}) };
}

describe('resuming a dropped tasks/result stream (2025-11-25 sessions)', () => {
  let fixture: HttpFixture;
  let peer: HttpPeer;
  beforeAll(async () => {
    fixture = await HttpFixture.start();
    peer = await fixture.peer();
    await peer.initialize();
  });
  afterAll(async () => {
    await peer.close();
    await fixture.close();
  });

  it('delivers the response of a tasks/result whose stream dropped to a GET with Last-Event-ID', async () => {
    const created = await peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 1, label: 'resumed' },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': peer.sessionId as string,
      'mcp-protocol-version': '2025-11-25',
    };
    const controller = new AbortController();
    const waiting = await fetch(fixture.url, {
      method: 'POST',
      headers,
      signal: controller.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'long-result', method: 'tasks/result', params: { taskId } }),
    });
    // The priming event gives the stream's first event id; then the connection drops.
    const primed = await readEvents(waiting, (events) => events.some((e) => e.id !== undefined));
    const lastEventId = primed.events.find((e) => e.id !== undefined)?.id as string;
    controller.abort();
    await eventually(async () => (await peer.request('tasks/get', { taskId })).result?.['status'] === 'completed');
    const resumed = await fetch(fixture.url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastEventId },
    });
    expect(resumed.status).toBe(200);
    const replay = await readEvents(resumed, (events) => events.some((e) => e.data?.includes('long-result')));
    replay.cancel();
    const response = JSON.parse(replay.events.find((e) => e.data?.includes('long-result'))?.data as string) as {
      result: { content: unknown };
    };
    expect(response.result.content).toEqual([{ type: 'text', text: 'Computed resumed in 1s' }]);
  });
});
