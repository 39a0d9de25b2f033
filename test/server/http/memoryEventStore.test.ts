import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { EventStoreBudget } from '../../../src/server/http/EventStoreBudget.js';
import { MemoryEventStore } from '../../../src/server/http/MemoryEventStore.js';

const PRIMING = {} as JSONRPCMessage;
const notification = (text: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: text },
});
const response = (id: number, text = 'done'): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { text } });

function clock(start = 1_000_000) {
  const time = { now: start };
  return { time, now: () => time.now };
}

function storeOf(options: { maxBytesPerSession?: number; answeredRetentionMs?: number; budget?: EventStoreBudget }) {
  const { time, now } = clock();
  const budget = options.budget ?? new EventStoreBudget(1 << 30);
  const store = new MemoryEventStore(
    budget,
    {
      maxBytesPerSession: options.maxBytesPerSession ?? 1 << 30,
      answeredRetentionMs: options.answeredRetentionMs ?? 60_000,
    },
    now,
  );
  return { store, time, budget };
}

/** The JSON-RPC ids of the responses still stored for each of `streams`. */
async function responsesOf(store: MemoryEventStore, streams: string[]): Promise<Record<string, unknown[]>> {
  const held: Record<string, unknown[]> = {};
  for (const stream of streams) {
    const ids: unknown[] = [];
    await store.replayEventsAfter(`${stream}:0`, {
      send: async (_id, message) => {
        if ('result' in message) ids.push(message.id);
      },
    });
    held[stream] = ids;
  }
  return held;
}

describe('MemoryEventStore', () => {
  it('replays the messages after an event id, priming events left out, as the JSON-RPC messages stored', async () => {
    const { store } = storeOf({});
    const priming = store.store('s1', PRIMING);
    const first = store.store('s1', notification('one'));
    store.store('s2', notification('other stream'));
    store.store('s1', notification('two'));
    store.store('s1', response(7));
    expect(priming).toMatch(/^s1:\d+$/);
    expect(await store.getStreamIdForEventId(priming)).toBe('s1');
    expect(await store.getStreamIdForEventId('nope:3')).toBeUndefined();

    const replayed: Array<[string, JSONRPCMessage]> = [];
    const stream = await store.replayEventsAfter(priming, {
      send: async (eventId, message) => void replayed.push([eventId, message]),
    });
    expect(stream).toBe('s1');
    expect(replayed.map(([, message]) => message)).toEqual([notification('one'), notification('two'), response(7)]);
    expect(replayed[0]?.[0]).toBe(first);
    // The same events as text, for a writer that sends them as they are.
    expect(store.eventsAfter(first).map(([, json]) => JSON.parse(json))).toEqual([notification('two'), response(7)]);
  });

  it('counts each event by its JSON (twice for text beyond Latin-1) plus a fixed overhead, and gives it all back', () => {
    const budget = new EventStoreBudget(1 << 30);
    const { store } = storeOf({ budget });
    store.store('s', PRIMING);
    const empty = store.bytes;
    store.store('s', notification('a'.repeat(1000)));
    const latin = store.bytes - empty;
    store.store('s', notification('é'.repeat(1000)));
    const stillLatin = store.bytes - empty - latin;
    store.store('s', notification('€'.repeat(1000)));
    const wide = store.bytes - empty - latin - stillLatin;
    expect(latin).toBeGreaterThan(1000);
    expect(stillLatin).toBe(latin);
    // Two bytes a character instead of one: the difference is the JSON's length.
    expect(wide - latin).toBe(JSON.stringify(notification('a'.repeat(1000))).length);
    expect(budget.used).toBe(store.bytes);
    store.clear();
    expect(store.bytes).toBe(0);
    expect(budget.used).toBe(0);
    expect(budget.stores.size).toBe(0);
  });

  it('drops answered streams once their retention is over, oldest answer first; open streams stay', async () => {
    const { store, time } = storeOf({ answeredRetentionMs: 1000 });
    store.store('a', response(1));
    time.now += 400;
    store.store('b', response(2));
    store.store('open', notification('still running'));
    time.now += 700; // a is 1,100 ms old, b 700 ms
    store.store('c', response(3));
    expect(await responsesOf(store, ['a', 'b', 'c'])).toEqual({ a: [], b: [2], c: [3] });
    time.now += 400;
    store.store('d', response(4));
    expect(await responsesOf(store, ['a', 'b', 'c', 'd'])).toEqual({ a: [], b: [], c: [3], d: [4] });
    expect(await store.getStreamIdForEventId('open:1')).toBe('open');
    expect(store.streamCount).toBe(3);
  });

  it("keeps a batch's stream, answered again, for the retention of its last answer", async () => {
    const { store, time } = storeOf({ answeredRetentionMs: 1000 });
    store.store('batch', response(1));
    store.store('x', response(9));
    time.now += 800;
    store.store('batch', response(2));
    time.now += 300; // the batch's first answer is 1,100 ms old, its last 300 ms
    store.store('y', response(10));
    expect(await responsesOf(store, ['batch', 'x', 'y'])).toEqual({ batch: [1, 2], x: [], y: [10] });
    time.now += 800;
    store.store('z', response(11));
    expect(await responsesOf(store, ['batch', 'y', 'z'])).toEqual({ batch: [], y: [10], z: [11] });
  });

  it('past its cap, a session gives up answered streams first, then the events that are not responses', async () => {
    const { store } = storeOf({});
    store.store('open', notification('x'.repeat(500)));
    store.store('old', response(1, 'x'.repeat(500)));
    store.store('new', response(2, 'x'.repeat(500)));
    const full = store.bytes;
    // A cap that holds a bit less: the oldest answered stream goes, the stream being written keeps its events.
    const capped = storeOf({ maxBytesPerSession: full - 100 }).store;
    capped.store('open', notification('x'.repeat(500)));
    capped.store('old', response(1, 'x'.repeat(500)));
    capped.store('new', response(2, 'x'.repeat(500)));
    expect(await responsesOf(capped, ['old', 'new'])).toEqual({ old: [], new: [2] });
    expect(capped.bytes).toBeLessThanOrEqual(full - 100);
    expect(await capped.getStreamIdForEventId('open:1')).toBe('open');
    // Only the stream being written is left answered: the open stream's notification goes before any response.
    capped.store('new', notification('y'.repeat(1000)));
    expect(await capped.getStreamIdForEventId('open:1')).toBeUndefined();
    expect(await responsesOf(capped, ['new'])).toEqual({ new: [2] });
  });

  it('keeps its bookkeeping right through many thousands of streams', async () => {
    const { store, time } = storeOf({ answeredRetentionMs: 50, maxBytesPerSession: 1_000_000 });
    for (let i = 0; i < 30_000; i++) {
      if (i % 100 === 0) time.now += 10;
      store.store(`s${i}`, PRIMING);
      store.store(`s${i}`, response(i));
      if (i % 7 === 0) store.store(`s${i}`, response(-i));
    }
    // Answered within the last 50 ms: the last five steps of the clock, 500 streams.
    expect(store.streamCount).toBe(500);
    expect(await responsesOf(store, ['s29999', 's29505', 's29499'])).toEqual({
      s29999: [29999],
      s29505: [29505, -29505],
      s29499: [],
    });
    let recount = 0;
    for (let i = 29_000; i < 30_000; i++) if (await store.getStreamIdForEventId(`s${i}:1`)) recount++;
    expect(recount).toBe(store.streamCount);
  });
});

describe('EventStoreBudget', () => {
  it('past the cap, lowers the sessions holding most to one level, a sixteenth under the cap; the others keep all', () => {
    const budget = new EventStoreBudget(100_000);
    const sessions = [0, 1, 2, 3].map(() => storeOf({ budget }).store) as [
      MemoryEventStore,
      MemoryEventStore,
      MemoryEventStore,
      MemoryEventStore,
    ];
    const fill = (store: MemoryEventStore, bytes: number) => {
      for (let i = 0; store.bytes < bytes; i++) store.store(`${store.bytes}-${i}`, response(i, 'x'.repeat(800)));
    };
    fill(sessions[0], 10_000);
    fill(sessions[1], 20_000);
    fill(sessions[2], 28_000);
    fill(sessions[3], 36_000);
    const before = sessions.map((store) => store.bytes);
    expect(budget.used).toBeLessThan(100_000);
    expect(budget.used).toBe(before.reduce((sum, bytes) => sum + bytes, 0));
    // The smallest session writes 8 kB more: the total passes the cap, and the two largest pay, down to one level.
    sessions[0].store('big', response(0, 'x'.repeat(8_000)));
    const after = sessions.map((store) => store.bytes);
    expect(budget.used).toBeLessThanOrEqual(100_000 - 100_000 / 16);
    expect(after[0]).toBeGreaterThan(before[0] as number);
    expect(after[1]).toBe(before[1]);
    expect(after[2]).toBeLessThan(before[2] as number);
    expect(after[3]).toBeLessThan(before[3] as number);
    expect(Math.abs((after[2] as number) - (after[3] as number))).toBeLessThan(1_500);
    expect(budget.used).toBe(after.reduce((sum, bytes) => sum + bytes, 0));
  });
});
