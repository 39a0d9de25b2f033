import { randomUUID } from 'node:crypto';

import type { TaskRecord } from '../src/engine/index.js';

/** A working task of `owner-(i % owners)`, created `i` ms after `now`, as the store benchmarks fill stores with. */
export function benchRecord(i: number, now: number, owners: number): TaskRecord {
  return {
    taskId: randomUUID(),
    owner: `owner-${i % owners}`,
    status: 'working',
    createdAt: now + i,
    lastUpdatedAt: now + i,
    retention: { kind: 'ttl', ttlMs: 86_400_000 },
    expiresAt: now + i + 86_400_000,
    request: { method: 'tools/call', params: { name: 'index-directory', arguments: { path: `/data/${i}` } } },
    inputRequests: {},
    inputAnswers: {},
    nextInputSeq: 1,
    dialect: 'bench',
    toolErrorStatus: 'failed',
    retrySafe: false,
    attempts: 0,
    meta: {},
    version: 1,
  };
}
