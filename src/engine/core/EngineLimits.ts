import { jsonBytes } from '../util/jsonBytes.js';
import { nestsDeeperThan } from '../util/jsonDepth.js';
import { TaskLimitError, TaskTooDeepError, TaskTooLargeError } from '../record/TaskError.js';
import {
  INTERNAL_ERROR_CODE,
  type RetentionPolicy,
  type RetentionRequest,
  type TaskOutcome,
} from '../record/TaskRecord.js';
import type { OwnerLimitKind } from '../contracts/TaskStore.js';
import { DEFAULT_TIMELINE_MAX_ENTRIES } from '../record/TaskTimeline.js';

/** Documented limits and their defaults (see docs/limits.md). */
export interface EngineLimits {
  /** Cap on any requested retention; `null` for no cap. Default 7 days. */
  maxTtlMs: number | null;
  /** Retention when the requestor asks for none. Default 24 hours. */
  defaultTtlMs: number;
  /** Smallest retention granted. Default 1 second. */
  minTtlMs: number;
  /** Non-terminal tasks one owner may hold at once, enforced atomically by the store. Default 100. */
  maxActivePerOwner: number;
  /**
   * Stored tasks (finished ones included) one owner may hold, enforced atomically by the store. At the cap, the
   * owner's tasks whose results were fetched are evicted, earliest fetched first, before a creation is refused.
   * Default 10,000.
   */
  maxStoredPerOwner: number;
  /**
   * Bytes of stored records (UTF-8 JSON) one owner may hold, checked atomically at each creation; evicts fetched tasks
   * as `maxStoredPerOwner` does. `null`: no cap. Default 256 MiB.
   */
  maxStoredBytesPerOwner: number | null;
  /**
   * Bytes of stored records of every owner together, checked at creation against a total re-read at most every
   * second; at the cap, any owner's fetched tasks are evicted, earliest fetched first. `null`: no cap. Default 1 GiB.
   */
  maxStoredBytesTotal: number | null;
  /** Page size of list. Default 50. */
  listPageSize: number;
  /**
   * Size cap (UTF-8 JSON bytes) of what a creation stores from the requestor: the request's params and the dialect's
   * data about it (capabilities, answers sent along). Also caps each input answer. `null`: no cap. Default 1 MiB.
   */
  maxArgumentsBytes: number | null;
  /** Size cap of a stored outcome (result or error); a larger one fails the task instead. `null`: no cap. Default 4 MiB. */
  maxResultBytes: number | null;
  /** Deepest nesting of arrays/objects accepted in a task's request params and in input answers. Default 64. */
  maxJsonDepth: number;
  /** Timeline entries kept per task (the first and the newest); 0 keeps none. Default 200. */
  timelineEntries: number;
  /**
   * Entries of a task's event log (its emitted events and its status changes); an emit past it is refused (the log
   * never drops entries, so cursors stay valid). The terminal status always finds room. Default 1000.
   */
  eventsPerTask: number;
  /** Size cap (UTF-8 JSON bytes) of one emitted event's data. Default 64 KiB. */
  maxEventBytes: number;
}

export const DEFAULT_LIMITS: EngineLimits = {
  maxTtlMs: 7 * 24 * 60 * 60 * 1000,
  defaultTtlMs: 24 * 60 * 60 * 1000,
  minTtlMs: 1000,
  maxActivePerOwner: 1000,
  maxStoredPerOwner: 10_000,
  maxStoredBytesPerOwner: 256 * 1024 * 1024,
  maxStoredBytesTotal: 1024 * 1024 * 1024,
  listPageSize: 50,
  maxArgumentsBytes: 1024 * 1024,
  maxResultBytes: 4 * 1024 * 1024,
  maxJsonDepth: 64,
  timelineEntries: DEFAULT_TIMELINE_MAX_ENTRIES,
  eventsPerTask: 1000,
  maxEventBytes: 64 * 1024,
};

/** The limits counted in whole units (tasks, entries, levels, ms, bytes), and the least each may be. */
const WHOLE: Array<[keyof EngineLimits, number]> = [
  ['maxTtlMs', 0],
  ['defaultTtlMs', 0],
  ['minTtlMs', 0],
  ['maxActivePerOwner', 0],
  ['maxStoredPerOwner', 0],
  ['maxStoredBytesPerOwner', 0],
  ['maxStoredBytesTotal', 0],
  ['listPageSize', 1],
  ['maxArgumentsBytes', 0],
  ['maxResultBytes', 0],
  ['maxJsonDepth', 1],
  ['timelineEntries', 0],
  ['eventsPerTask', 0],
  ['maxEventBytes', 0],
];

/**
 * Refuses, as the engine is made, a limit that is not a whole number in range (`null` stays allowed where the type
 * has it): stores write limits into their statements (PostgreSQL's bigint parameters), where `Infinity` or 2.5 would
 * fail every creation instead of failing once, here, with the limit's name.
 */
export function checkLimits(limits: EngineLimits): void {
  for (const [name, least] of WHOLE) {
    const value = limits[name];
    if (value === null) continue;
    if (!Number.isSafeInteger(value) || (value as number) < least)
      throw new TypeError(`limits.${name} must be an integer of at least ${least}; got ${String(value)}`);
  }
}

/** Refuses what the requestor sends (arguments, an input answer) over the size cap. */
export function checkSize(limits: EngineLimits, what: 'arguments' | 'input', value: unknown): void {
  const max = limits.maxArgumentsBytes;
  if (max === null) return;
  const bytes = jsonBytes(value);
  if (bytes > max) throw new TaskTooLargeError(what, bytes, max);
}

/** Refuses nesting deeper than the cap: serializing a hostile depth would overflow the stack inside the store. */
export function checkDepth(limits: EngineLimits, what: 'params' | 'input', value: unknown): void {
  if (nestsDeeperThan(value, limits.maxJsonDepth)) throw new TaskTooDeepError(what, limits.maxJsonDepth);
}

/** The retention granted for a requested one. */
export function clampRetention(limits: EngineLimits, requested: RetentionRequest | undefined): RetentionPolicy {
  const { maxTtlMs, defaultTtlMs, minTtlMs } = limits;
  const clamp = (value: number | null | undefined): number | null => {
    // spec R29 R71: the server may override the requested ttl and caps it; the actual value is reported back.
    let ms = value === undefined ? defaultTtlMs : value;
    if (ms !== null) ms = Math.max(minTtlMs, Math.round(ms));
    if (maxTtlMs !== null && (ms === null || ms > maxTtlMs)) ms = maxTtlMs;
    return ms;
  };
  if (requested?.kind === 'keepAlive') return { kind: 'keepAlive', keepAliveMs: clamp(requested.keepAliveMs) };
  return { kind: 'ttl', ttlMs: clamp(requested?.ttlMs) };
}

/** Refuses a run for an owner already holding `active` non-terminal tasks at the cap. */
export function checkActiveLimit(limits: EngineLimits, active: number): void {
  if (active >= limits.maxActivePerOwner) throw limitError(limits, 'active');
}

/** What frees room at a stored-task bound: fetching results lets the engine evict those tasks. */
const MAKE_ROOM =
  'fetch the results of finished tasks (fetched tasks make room), wait for them to expire or delete them';

/**
 * The error for a cap the store refused an insert with (spec R70), or the total byte cap (`total`): raised only once
 * no task whose result was fetched is left to evict.
 */
export function limitError(limits: EngineLimits, limit: OwnerLimitKind | 'total_bytes'): TaskLimitError {
  switch (limit) {
    case 'active':
      return new TaskLimitError(
        'concurrent_tasks',
        `Too many active tasks for this caller (limit ${limits.maxActivePerOwner}); wait for some to finish or cancel them`,
      );
    case 'stored':
      return new TaskLimitError(
        'stored_tasks',
        `Too many stored tasks for this caller (limit ${limits.maxStoredPerOwner}, finished tasks included) and no fetched result to evict; ${MAKE_ROOM}`,
      );
    case 'stored_bytes':
      return new TaskLimitError(
        'stored_bytes',
        `Too much stored task data for this caller (limit ${String(limits.maxStoredBytesPerOwner)} bytes, finished tasks included) and no fetched result to evict; ${MAKE_ROOM}`,
      );
    case 'total_bytes':
      return new TaskLimitError(
        'total_bytes',
        `The server's task storage is full (limit ${String(limits.maxStoredBytesTotal)} bytes, every caller's tasks together) and no fetched result to evict; try again later`,
      );
  }
}

/** The error outcome that replaces an outcome over `maxResultBytes`, with its statusMessage; undefined when it fits. */
export function capOutcome(
  limits: EngineLimits,
  outcome: TaskOutcome,
): { outcome: TaskOutcome; statusMessage: string; bytes: number } | undefined {
  const max = limits.maxResultBytes;
  if (max === null) return undefined;
  const bytes = jsonBytes(outcome);
  if (bytes <= max) return undefined;
  const size = Number.isFinite(bytes) ? `${bytes} bytes` : 'too deeply nested to store';
  const message = `The task's result is too large to store (${size}; the limit is ${max} bytes)`;
  const error = { code: INTERNAL_ERROR_CODE, message, data: { limit: 'result_size', maxBytes: max } };
  return { outcome: { kind: 'error', error }, statusMessage: message, bytes };
}
