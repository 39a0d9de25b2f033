import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, TaskNotSupportedError, textOf } from '../../src/client/index.js';
import { eventsPeer } from '../events/eventsPeer.js';
import { startEventsServer, type EventsServer } from '../events/eventsServer.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * What a proxied caller gets of an upstream that serves the Events extension (docs/proxy.md, "Events"): the tools and
 * their results, not the upstream's events. The proxy does not declare Events, answers `events/*` as an unknown
 * method, and names no event source on its tasks; the upstream's event log stays the upstream's.
 */
describe('proxy in front of an upstream with Events', () => {
  let upstream: EventsServer;
  let proxy: ProxyProcess;
  let client: TaskClient;
  beforeAll(async () => {
    upstream = await startEventsServer('memory');
    proxy = await startProxyProcess(['--store', 'memory', '--upstream', upstream.http.url]);
    client = await TaskClient.connect({ url: proxy.url });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await upstream?.close();
  });

  it('runs the upstream tool as a task, with no event source and no Events declared', async () => {
    expect(client.dialect).toBe('ext-2026');
    const handle = await client.callTool('staged', { stages: 2, stageMs: 10 }, { mode: 'task' });
    expect(handle.isTask).toBe(true);
    expect(handle.eventSource).toBeUndefined();
    expect(textOf(await handle.result())).toBe('2 stages');
    expect(() => client.events()).toThrow(TaskNotSupportedError);
  });

  it('answers every events/* method with -32601, where the upstream itself serves them', async () => {
    const viaProxy = eventsPeer(proxy.url);
    const direct = eventsPeer(upstream.http.url);
    for (const method of ['events/list', 'events/poll', 'events/stream', 'events/subscribe', 'events/unsubscribe']) {
      const params = method === 'events/list' ? {} : { name: 'com.example.stage', arguments: { taskId: 'x' } };
      expect((await viaProxy.request(method, params)).error?.code, method).toBe(-32601);
    }
    expect((await direct.request('events/list', {})).error).toBeUndefined();
  });
});
