import pg from 'pg';

import type { OwnerLimits, ReplaceAlong, TaskRecord, TimelineAppend } from '../../engine/index.js';

/** A task row as the store's reads select it: the record, and the lease column renewed in place. */
export interface Row {
  data: TaskRecord;
  lease_until: number | null;
}

export const ACTIVE = `status IN ('working', 'input_required')`;
export const COLUMNS =
  'task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data';

/** BIGINT columns hold epoch milliseconds and versions, all safe integers: read them as numbers, not strings. */
const INT8_OID = 20;
export const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export type InsertOutcome = 'ok' | 'active' | 'stored' | 'conflict';

export interface CappedInsert {
  record: TaskRecord;
  limits: OwnerLimits;
  /** The new task's first timeline entries, appended in the insert's statement. */
  timeline?: TimelineAppend;
}

export interface Replacement {
  next: TaskRecord;
  expectedVersion: number;
  along?: ReplaceAlong;
}

/** Types of `columns(record)`, for the arrays a batch sends. */
export const COLUMN_TYPES = ['text', 'text', 'text', 'bigint', 'bigint', 'text', 'text', 'bigint', 'bigint', 'json'];
/**
 * The compare-and-set's assignments of a batch from its rows `v` onto the table `t`: a lease renewed since the writer
 * read the task is kept when the runner stays the same.
 */
export const SET_FROM_V = `status = v.status, expires_at = v.expires_at, runner = v.runner,
  lease_until = CASE WHEN t.runner IS NOT DISTINCT FROM v.runner AND v.lease_until IS NOT NULL
                      AND t.lease_until > v.lease_until
                     THEN t.lease_until ELSE v.lease_until END,
  version = v.version, data = v.data`;
export const REPLACEMENT_TYPES = ['text', 'bigint', 'text', 'bigint', 'text', 'bigint', 'bigint', 'json'];
/** The event payload, the timeline entries (a JSON array) and how many of the newest to keep after the first. */
export const ALONG_TYPES = ['text', 'json', 'bigint'];

export function replacement({ next, expectedVersion }: Replacement): unknown[] {
  return [
    next.taskId,
    expectedVersion,
    next.status,
    next.expiresAt,
    next.runner ?? null,
    next.leaseUntil ?? null,
    next.version,
    JSON.stringify(next),
  ];
}

export function columns(record: TaskRecord): unknown[] {
  return [
    record.taskId,
    record.owner,
    record.status,
    record.createdAt,
    record.expiresAt,
    record.idempotencyKey ?? null,
    record.runner ?? null,
    record.leaseUntil ?? null,
    record.version,
    // Serialised here: node-postgres would send a JS array in `data` as a PostgreSQL array, not JSON.
    JSON.stringify(record),
  ];
}

export function decode(row: Row): TaskRecord {
  const record = row.data;
  // The lease column is renewed in place without rewriting the record.
  if (row.lease_until === null) delete record.leaseUntil;
  else record.leaseUntil = row.lease_until;
  return record;
}
