import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModernPeer } from '../helpers/rawWire.js';
import { gates, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer, openStream } from './eventsPeer.js';

function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token === 'alice' || token === 'bob' ? { token, clientId: token, scopes: [] } : undefined;
}
const as = (who: string) => ({ authorization: `Bearer ${who}` });

// spec TE17: concurrent tasks/stream requests are bounded per caller (the events streams' per-caller bound).
describe('SEP-2694 tasks/stream limits', () => {
  let server: EventsServer;
  let alice: ModernPeer;

  beforeAll(async () => {
    server = await startEventsServer('memory', { taskStreams: true, maxStreamsPerOwner: 2 }, { authenticate });
    alice = eventsPeer(server.http.url, as('alice'));
  });
  afterAll(async () => server.close());

  it('TE17: a caller past its open streams gets -32013 naming the limit; another caller is not counted with it', async () => {
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages: 1, stageMs: 5, gate: 'te17' },
    });
    const taskId = created.result?.['taskId'] as string;
    const stream = (who: string) =>
      openStream(server.http.url, { taskId }, { headers: as(who), method: 'tasks/stream' });
    const open = [await stream('alice'), await stream('alice')];
    for (const one of open) expect(one.contentType).toContain('text/event-stream');
    const third = await stream('alice');
    await third.done;
    expect(third.messages[0]).toMatchObject({ error: { code: -32013, data: { limit: 'event_streams', max: 2 } } });
    // Bob's stream of the same task answers as a missing task would (TE15), not with alice's limit.
    const bobs = await stream('bob');
    await bobs.done;
    expect((bobs.messages[0] as { error?: { code: number } }).error?.code).not.toBe(-32013);
    gates.get('te17')?.();
    for (const one of open) await one.done;
    // Ended streams no longer count: the caller opens another.
    const later = await stream('alice');
    await later.done;
    expect(later.messages.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
  });
});
