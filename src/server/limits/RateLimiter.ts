import { LRUCache } from 'lru-cache';

import { TaskLimitError } from '../../engine/index.js';
import { TokenBuckets, type BucketShape } from './TokenBuckets.js';

/** What a task request costs against (spec R69); each class has its own quota per client. */
export type RateClass = 'creation' | 'wait' | 'poll' | 'operation';

export interface RateLimit {
  /** Task operations per second per client: `tasks/get`, `tasks/list`, `tasks/cancel`, `tasks/update`, `tasks/delete`. Default 200. */
  perSecond: number;
  /** Operations allowed in a burst above the sustained rate. Default 1000. */
  burst: number;
  /** Task creations per client. Default 50/s with bursts of 500. */
  creations?: BucketShape;
  /** Blocking waits (`tasks/result`, `subscriptions/listen`), charged once per request however long it waits. Default 50/s with bursts of 1000. */
  waits?: BucketShape;
  /** `tasks/get` of one task in a row sooner than its advertised pollInterval. Default 5. */
  pollBurst?: number;
  /** How many clients' worth of quota one address gets in total across the client keys it sends. Default 10. */
  perAddressClients?: number;
}

export const DEFAULT_RATE_LIMIT: Required<RateLimit> = {
  perSecond: 200,
  burst: 1000,
  creations: { perSecond: 50, burst: 500 },
  waits: { perSecond: 50, burst: 1000 },
  pollBurst: 5,
  perAddressClients: 10,
};

/** The tasks whose advertised pollInterval is kept (per client and task); polls of others are measured by the default. */
const MAX_ADVERTISED_INTERVALS = 100_000;

/** How a task request is charged: `tasks/result` waits, `tasks/get` polls, creations (anything else) create. */
export function rateClassOf(method: string): RateClass {
  if (method === 'tasks/result' || method === 'subscriptions/listen') return 'wait';
  if (method === 'tasks/get') return 'poll';
  if (method.startsWith('tasks/')) return 'operation';
  return 'creation';
}

/** Who is charged: the client's own key, and for self-chosen client keys the address they share. */
export interface RateKey {
  key: string;
  group?: string;
}

const NOUN: Record<Exclude<RateClass, 'poll'>, string> = {
  creation: 'task creations',
  wait: 'blocking waits (tasks/result, subscriptions/listen)',
  operation: 'task operations',
};

/**
 * Per-client token buckets for task traffic (spec R69), shaped after how clients behave: creations and blocking waits
 * have quotas of their own, and polling one task is refused only when it runs ahead of the pollInterval the server
 * advertised for it. Every refusal says when to retry (`retryAfterMs`).
 */
export class RateLimiter {
  private readonly limit: Required<RateLimit>;
  private readonly classes: Record<Exclude<RateClass, 'poll'>, { shape: BucketShape; buckets: TokenBuckets }>;
  private readonly polls: TokenBuckets;
  /**
   * The pollInterval last advertised to a client for a task, learnt from the answers it got; the 100,000 advertised
   * last. An LRU cache, not a Map trimmed from its front: once full, every trim would iterate past the slots of the
   * entries deleted before (about 50 µs an answer at this size).
   */
  private readonly intervals = new LRUCache<string, number>({ max: MAX_ADVERTISED_INTERVALS });

  constructor(
    limit: RateLimit,
    private readonly defaultPollIntervalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.limit = { ...DEFAULT_RATE_LIMIT, ...limit };
    const bucket = (shape: BucketShape) => ({ shape, buckets: new TokenBuckets(now) });
    this.classes = {
      creation: bucket(this.limit.creations),
      wait: bucket(this.limit.waits),
      operation: bucket({ perSecond: this.limit.perSecond, burst: this.limit.burst }),
    };
    this.polls = new TokenBuckets(now);
  }

  /** Charges one request; throws a TaskLimitError with `retryAfterMs` when it is over its quota. */
  take(who: RateKey, kind: RateClass, taskId?: string): void {
    if (kind === 'poll' && taskId !== undefined) this.takePoll(who.key, taskId);
    const cls = kind === 'poll' ? 'operation' : kind;
    const { shape, buckets } = this.classes[cls];
    this.charge(buckets, who.key, shape, cls);
    if (who.group === undefined) return;
    const share = this.limit.perAddressClients;
    const grouped = { perSecond: shape.perSecond * share, burst: shape.burst * share };
    try {
      this.charge(buckets, who.group, grouped, cls);
    } catch (error) {
      buckets.refund(who.key, shape);
      throw error;
    }
  }

  /** Records the pollInterval a client was told for a task, so its next polls are measured against it. */
  advertised(who: RateKey, taskId: string, pollIntervalMs: number): void {
    if (!Number.isFinite(pollIntervalMs) || pollIntervalMs <= 0) return;
    this.intervals.set(pollKey(who.key, taskId), pollIntervalMs);
  }

  private takePoll(client: string, taskId: string): void {
    const key = pollKey(client, taskId);
    const intervalMs = this.intervals.peek(key) ?? this.defaultPollIntervalMs;
    const wait = this.polls.take(key, { perSecond: 1000 / intervalMs, burst: this.limit.pollBurst });
    if (wait === 0) return;
    throw new TaskLimitError(
      'rate',
      `Polling too fast: this task's pollInterval is ${intervalMs} ms; retry in ${wait} ms`,
      { retryAfterMs: wait, rate: 'polls', pollIntervalMs: intervalMs },
    );
  }

  private charge(buckets: TokenBuckets, key: string, shape: BucketShape, cls: Exclude<RateClass, 'poll'>): void {
    const wait = buckets.take(key, shape);
    if (wait === 0) return;
    throw new TaskLimitError(
      'rate',
      `Rate limit exceeded: at most ${shape.perSecond} ${NOUN[cls]} per second (bursts of ${shape.burst}); retry in ${wait} ms`,
      { retryAfterMs: wait, rate: `${cls}s` },
    );
  }
}

function pollKey(client: string, taskId: string): string {
  return `${client}\u0000${taskId}`;
}
