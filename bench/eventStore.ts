// npm run bench:event-store — the resumable-SSE event stores of 2025-era sessions under steady traffic: each request's
// stream (a priming event and a response of about 300 bytes, named by randomUUID as the transports name them), spread
// over 32 and over 1,000 sessions, the clock moving so that answered streams age out after their retention and the
// shared byte budget evicts. Prints the cost per stream (store and every eviction it causes) with 32 and with 1,000
// sessions, and the live heap the stores hold against the bytes they count toward their caps: a ratio near 1 means
// the documented caps bound the memory the events really take.
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { EventStoreBudget } from '../src/server/http/EventStoreBudget.js';
import { MemoryEventStore } from '../src/server/http/MemoryEventStore.js';
import { fmt } from './measure.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const STREAMS = Number(process.env['EVENT_STORE_STREAMS'] ?? 600_000);
const BUDGET = 64 * 1024 * 1024;

function response(id: number) {
  return {
    jsonrpc: '2.0' as const,
    id,
    result: {
      taskId: randomUUID(),
      status: 'completed',
      createdAt: new Date().toISOString(),
      lastUpdatedAt: new Date().toISOString(),
      ttl: 3_600_000,
      pollInterval: 1000,
    },
  };
}

function run(sessionCount: number): { nsPerStream: number; heapPerCounted: number; counted: number } {
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const time = { now: Date.now() };
  const budget = new EventStoreBudget(BUDGET);
  const sessions = Array.from(
    { length: sessionCount },
    () =>
      new MemoryEventStore(
        budget,
        { maxBytesPerSession: 16 * 1024 * 1024, answeredRetentionMs: 60_000 },
        () => time.now,
      ),
  );
  let elapsed = 0n;
  for (let i = 0; i < STREAMS; i++) {
    // 10,000 requests a second.
    if (i % 10 === 0) time.now += 1;
    const session = sessions[i % sessionCount] as MemoryEventStore;
    const streamId = randomUUID();
    const message = response(i);
    const text = JSON.stringify(message);
    const started = process.hrtime.bigint();
    session.store(streamId, {} as never);
    session.store(streamId, message, text);
    elapsed += process.hrtime.bigint() - started;
  }
  gc();
  const heap = process.memoryUsage().heapUsed - heapBefore;
  const counted = budget.used;
  // Kept alive to here, so the collection above measured them.
  sessions.forEach((session) => session.clear());
  return { nsPerStream: Number(elapsed) / STREAMS, heapPerCounted: heap / counted, counted };
}

console.log(
  `bench:event-store — ${fmt(STREAMS)} streams, 10,000 a second, budget ${BUDGET / 1024 / 1024} MiB, retention 60 s`,
);
run(32); // warm-up
const few = run(32);
const many = run(1000);
for (const [name, result] of [
  ['32 sessions', few],
  ['1,000 sessions', many],
] as const)
  console.log(
    `${name.padEnd(15)} ${fmt(result.nsPerStream)} ns a stream; live heap ÷ counted bytes ${result.heapPerCounted.toFixed(2)} (${fmt(result.counted / 1024 / 1024, 1)} MiB counted)`,
  );
console.log(`ratio: cost a stream with 1,000 sessions ÷ with 32: ${(many.nsPerStream / few.nsPerStream).toFixed(2)}`);
