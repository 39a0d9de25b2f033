import { randomUUID } from 'node:crypto';

import type { TaskRecord } from '../../src/engine/index.js';

/** A complete, valid task record for store-level tests. */
export function makeRecord(overrides: Partial<TaskRecord> = {}): TaskRecord {
  const createdAt = overrides.createdAt ?? Date.now();
  return {
    taskId: randomUUID(),
    owner: 'owner-a',
    status: 'working',
    createdAt,
    lastUpdatedAt: createdAt,
    retention: { kind: 'ttl', ttlMs: 60_000 },
    expiresAt: createdAt + 60_000,
    request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
    inputRequests: {},
    inputAnswers: {},
    nextInputSeq: 1,
    dialect: 'test',
    toolErrorStatus: 'failed',
    retrySafe: false,
    attempts: 0,
    meta: {},
    version: 1,
    ...overrides,
  };
}
