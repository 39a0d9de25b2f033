import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  HttpFixture,
  HttpPeer,
  ModernPeer,
  startPeer,
  eventually,
  type RawPeer,
  type Response,
} from '../helpers/rawWire.js';

const KEY_HEADER = 'mcp-tasks-client-key';

type Refusal = { code: number; message: string; data?: Record<string, unknown> };

async function legacyTask(peer: RawPeer, seconds: number): Promise<Response> {
  return peer.request('tools/call', { name: 'slow_compute', arguments: { seconds, label: 'r' }, task: {} });
}

function taskIdOf(response: Response): string {
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return (response.result?.['task'] as { taskId: string }).taskId;
}

/** Runs `work` over `items`, `parallel` at a time. */
async function inBatches<T, R>(items: T[], parallel: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += parallel) {
    results.push(...(await Promise.all(items.slice(i, i + parallel).map(work))));
  }
  return results;
}

function expectRateRefusal(error: Refusal | undefined, rate: string): number {
  expect(error?.code).toBe(-32600);
  expect(error?.data?.['limit']).toBe('rate');
  expect(error?.data?.['rate']).toBe(rate);
  const retryAfterMs = error?.data?.['retryAfterMs'];
  expect(typeof retryAfterMs).toBe('number');
  expect(retryAfterMs as number).toBeGreaterThan(0);
  return retryAfterMs as number;
}

describe('default limits fit a well-behaved client', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    // The runtime's own defaults (the fixture relaxes only the poll burst unless told).
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: 'token-a:alice', MCP_TASKS_POLL_BURST: '5' } });
  });
  afterAll(async () => fixture.close());

  it('one principal starts 300 tasks over two sessions, then awaits each with tasks/result: no refusal', async () => {
    const sessions = [
      await fixture.peer({ authorization: 'Bearer token-a' }),
      await fixture.peer({ authorization: 'Bearer token-a' }),
    ];
    for (const peer of sessions) await peer.initialize();
    const plan = Array.from({ length: 300 }, (_, i) => sessions[i % 2] as HttpPeer);
    const created = await inBatches(plan, 20, async (peer) => ({ peer, response: await legacyTask(peer, 0) }));
    const refused = created.filter(({ response }) => response.error !== undefined);
    expect(refused.map(({ response }) => response.error)).toEqual([]);
    // Every wait at once, on both sessions; then one look at each.
    const results = await Promise.all(
      created.map(({ peer, response }) => peer.request('tasks/result', { taskId: taskIdOf(response) })),
    );
    expect(results.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
    expect(results.every((r) => Array.isArray(r.result?.['content']))).toBe(true);
    const looks = await Promise.all(
      created.map(({ peer, response }) => peer.request('tasks/get', { taskId: taskIdOf(response) })),
    );
    expect(looks.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
    for (const peer of sessions) await peer.close();
  });

  it('a 2026-07-28 client creates 100 tasks and polls each at its pollInterval until done: no refusal', async () => {
    const peer = new ModernPeer(fixture.url, { [KEY_HEADER]: 'poller' });
    const ids = await inBatches(Array.from({ length: 100 }), 20, async () => {
      const created = await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0.5 } });
      expect(created.error, JSON.stringify(created.error)).toBeUndefined();
      return (created.result as { taskId: string; pollIntervalMs: number }).taskId;
    });
    const errors: unknown[] = [];
    await Promise.all(
      ids.map(async (taskId) => {
        for (;;) {
          const got = await peer.request('tasks/get', { taskId });
          if (got.error) errors.push(got.error);
          const status = got.result?.['status'];
          if (got.error || status === 'completed' || status === 'failed') return;
          await new Promise((resolve) => setTimeout(resolve, got.result?.['pollIntervalMs'] as number));
        }
      }),
    );
    expect(errors).toEqual([]);
  });
});

for (const kind of ['stdio', 'http'] as const) {
  describe(`polling faster than the advertised pollInterval is what gets refused (${kind})`, () => {
    let peer: RawPeer;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ peer, close } = await startPeer(kind, { env: { MCP_TASKS_POLL_BURST: '5' } }));
      await peer.initialize();
    });
    afterAll(async () => close());

    it('a burst of polls of one task is refused with retryAfterMs; after it, and for other tasks, polls pass', async () => {
      const taskId = taskIdOf(await legacyTask(peer, 20));
      const other = taskIdOf(await legacyTask(peer, 20));
      const answers: Response[] = [];
      // Back to back until refused: the first polls pass (pollBurst 5), then the task's 200 ms interval is enforced.
      while (answers.length < 30 && !answers.at(-1)?.error) answers.push(await peer.request('tasks/get', { taskId }));
      expect(answers.slice(0, 5).every((a) => a.result?.['status'] === 'working')).toBe(true);
      const refusal = answers.at(-1)?.error as Refusal;
      const retryAfterMs = expectRateRefusal(refusal, 'polls');
      expect(retryAfterMs).toBeLessThanOrEqual(200);
      expect(refusal.message).toMatch(/Polling too fast: this task's pollInterval is 200 ms; retry in \d+ ms/);
      // Another task is not affected, and the same one is answered once the client waited as told.
      expect((await peer.request('tasks/get', { taskId: other })).result?.['status']).toBe('working');
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs + 20));
      expect((await peer.request('tasks/get', { taskId })).result?.['status']).toBe('working');
      await peer.request('tasks/cancel', { taskId });
      await peer.request('tasks/cancel', { taskId: other });
    });
  });
}

describe('creations and blocking waits have quotas of their own', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    // Operations 1/s (burst 3), creations 1/s (burst 10), waits 1/s (burst 4).
    fixture = await HttpFixture.start({ env: { MCP_TASKS_RATE_LIMIT: '1:3:1:10:1:4' } });
  });
  afterAll(async () => fixture.close());

  it('exhausted operations do not stop creations or waits, and each refusal names its quota', async () => {
    const peer = await fixture.peer();
    await peer.initialize();
    const lists = await Promise.all(Array.from({ length: 6 }, () => peer.request('tasks/list')));
    expectRateRefusal(lists.find((r) => r.error)?.error as Refusal, 'operations');
    const created = await Promise.all(Array.from({ length: 4 }, () => legacyTask(peer, 1)));
    const ids = created.map(taskIdOf);
    // Four blocking waits held ~1 s each cost one unit each, not one per moment waited.
    const waits = await Promise.all(ids.map((taskId) => peer.request('tasks/result', { taskId })));
    expect(waits.filter((w) => w.error).map((w) => w.error)).toEqual([]);
    // Meanwhile about one unit came back (1/s): of three more waits at once, at least one is refused.
    const again = await Promise.all(ids.slice(0, 3).map((taskId) => peer.request('tasks/result', { taskId })));
    const refusedWait = again.find((w) => w.error)?.error as Refusal;
    const retryAfterMs = expectRateRefusal(refusedWait, 'waits');
    expect(refusedWait.message).toMatch(/at most 1 blocking waits .* per second \(bursts of 4\); retry in \d+ ms/);
    expect(retryAfterMs).toBeLessThanOrEqual(1000);
    const more = await Promise.all(Array.from({ length: 12 }, () => legacyTask(peer, 0)));
    const refusedCreation = more.find((r) => r.error)?.error as Refusal;
    expectRateRefusal(refusedCreation, 'creations');
    expect(refusedCreation.message).toMatch(/^Cannot create task: Rate limit exceeded: at most 1 task creations/);
    await peer.close();
  });
});

describe('unauthenticated stateless callers get quotas per client, not one shared `anonymous`', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_MAX_ACTIVE: '5', MCP_TASKS_RATE_LIMIT: '5:20' } });
  });
  afterAll(async () => fixture.close());

  it('2026-07-28: a noisy client filling its task cap and rate limit leaves another client untouched', async () => {
    const noisy = new ModernPeer(fixture.url, { [KEY_HEADER]: 'noisy' });
    const quiet = new ModernPeer(fixture.url, { [KEY_HEADER]: 'quiet' });
    const long = () => noisy.request('tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    const noisyCreations = await Promise.all(Array.from({ length: 8 }, long));
    const capped = noisyCreations.find((r) => r.error);
    expect(capped?.error?.message).toMatch(/Too many active tasks/);
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => noisy.request('tasks/cancel', { taskId: `guess-${i}` })),
    );
    expectRateRefusal(flood.find((r) => r.error?.code === -32600)?.error as Refusal, 'operations');
    // The quiet client creates and polls as if nobody else were there.
    const created = await quiet.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const taskId = (created.result as { taskId: string }).taskId;
    const done = await eventually(async () => {
      const got = await quiet.request('tasks/get', { taskId });
      expect(got.error).toBeUndefined();
      if (got.result?.['status'] !== 'completed') await new Promise((resolve) => setTimeout(resolve, 200));
      return got.result?.['status'] === 'completed';
    });
    expect(done).toBe(true);
    for (const r of noisyCreations) {
      const id = (r.result as { taskId?: string } | undefined)?.taskId;
      if (id) await noisy.request('tasks/cancel', { taskId: id });
    }
  });

  it('2025-11-25 stateless: the same, keyed per client', async () => {
    const noisy = new HttpPeer(fixture.url, { [KEY_HEADER]: 'noisy-legacy' });
    const quiet = new HttpPeer(fixture.url, { [KEY_HEADER]: 'quiet-legacy' });
    const noisyCreations = await Promise.all(Array.from({ length: 8 }, () => legacyTask(noisy, 30)));
    expect(noisyCreations.find((r) => r.error)?.error?.message).toMatch(/Too many active tasks/);
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => noisy.request('tasks/cancel', { taskId: `guess-${i}` })),
    );
    expectRateRefusal(flood.find((r) => r.error?.code === -32600)?.error as Refusal, 'operations');
    const taskId = taskIdOf(await legacyTask(quiet, 0));
    const result = await quiet.request('tasks/result', { taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Computed r in 0s' }]);
    expect((await quiet.request('tasks/get', { taskId })).result?.['status']).toBe('completed');
    for (const r of noisyCreations) if (r.result) await noisy.request('tasks/cancel', { taskId: taskIdOf(r) });
  });
});
