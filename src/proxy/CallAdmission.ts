export interface CallAdmissionOptions {
  /** Plain calls forwarded to the upstream at once, all callers together; default 64. */
  maxInFlight?: number;
  /** Plain calls of one caller forwarded at once; default 16. */
  maxInFlightPerCaller?: number;
  /** Calls of one caller waiting for a slot; default 32. One more is refused. */
  maxQueuedPerCaller?: number;
  /** How long a call may wait for a slot before it is refused; default 30 s. */
  maxWaitMs?: number;
}

export const DEFAULT_CALL_ADMISSION = {
  maxInFlight: 64,
  maxInFlightPerCaller: 16,
  maxQueuedPerCaller: 32,
  maxWaitMs: 30_000,
} as const satisfies Required<CallAdmissionOptions>;

/** A plain call the proxy will not forward now: the caller has too much under way. */
export class CallRefusedError extends Error {
  readonly limit = 'upstream_calls';
  constructor(
    message: string,
    readonly details: { maxInFlight: number; maxQueued: number; retryAfterMs: number },
  ) {
    super(message);
  }
}

interface Waiter {
  key: string;
  admit(): void;
}

/**
 * Bounds how many plain calls (and other forwarded requests) go to the upstream at once, overall and per caller, with
 * a short queue in arrival order: one caller's burst cannot become an unbounded fan-out, nor starve the others, and a
 * caller that waits its turn is served. Task runs are bounded by the engine's slots instead.
 */
export class CallAdmission {
  private readonly settings: Required<CallAdmissionOptions>;
  private total = 0;
  private readonly running = new Map<string, number>();
  private readonly queued = new Map<string, number>();
  private readonly waiters: Waiter[] = [];

  constructor(options: CallAdmissionOptions = {}) {
    this.settings = { ...DEFAULT_CALL_ADMISSION, ...stripUndefined(options) };
    for (const [name, value] of Object.entries(this.settings)) {
      const least = name === 'maxQueuedPerCaller' || name === 'maxWaitMs' ? 0 : 1;
      if (!Number.isInteger(value) || value < least)
        throw new TypeError(`upstream.${name} must be a whole number ≥ ${least}`);
    }
  }

  /** Resolves with a release function once the call may go; rejects with CallRefusedError when it may not. */
  async enter(key: string, signal?: AbortSignal): Promise<() => void> {
    // Every waiter that fits has been let go (wake runs on each release), so one that fits now passes nobody.
    if (this.fits(key)) return this.start(key);
    const { maxQueuedPerCaller, maxWaitMs } = this.settings;
    if ((this.queued.get(key) ?? 0) >= maxQueuedPerCaller) throw this.refusal(key, 'waiting');
    bump(this.queued, key, 1);
    try {
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          key,
          admit: () => {
            cleanup();
            resolve();
          },
        };
        const leave = (error: Error) => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          cleanup();
          reject(error);
        };
        const timer = setTimeout(() => leave(this.refusal(key, 'waited')), maxWaitMs);
        const onAbort = () => leave(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
        const cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiters.push(waiter);
      });
    } finally {
      bump(this.queued, key, -1);
    }
    // wake() counted the slot when it let this call go.
    return this.releaser(key);
  }

  private fits(key: string): boolean {
    return this.total < this.settings.maxInFlight && (this.running.get(key) ?? 0) < this.settings.maxInFlightPerCaller;
  }

  private start(key: string): () => void {
    this.total++;
    bump(this.running, key, 1);
    return this.releaser(key);
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      bump(this.running, key, -1);
      this.wake();
    };
  }

  /** The first waiter in arrival order whose caller is below its share goes next (others' turns are kept). */
  private wake(): void {
    for (let i = 0; i < this.waiters.length && this.total < this.settings.maxInFlight;) {
      const waiter = this.waiters[i] as Waiter;
      if (!this.fits(waiter.key)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      // Counted now, so the next waiter sees this one's slot taken.
      this.total++;
      bump(this.running, waiter.key, 1);
      waiter.admit();
    }
  }

  private refusal(key: string, why: 'waiting' | 'waited'): CallRefusedError {
    const { maxInFlightPerCaller, maxQueuedPerCaller, maxWaitMs } = this.settings;
    const mine = this.running.get(key) ?? 0;
    const reason =
      why === 'waiting'
        ? `${mine} of this caller's calls are in flight and ${maxQueuedPerCaller} more are waiting`
        : `no slot came free within ${maxWaitMs} ms`;
    return new CallRefusedError(
      `Too many upstream calls: at most ${maxInFlightPerCaller} per caller and ${this.settings.maxInFlight} in all go to the upstream at once; ${reason}. Retry when some have finished`,
      { maxInFlight: maxInFlightPerCaller, maxQueued: maxQueuedPerCaller, retryAfterMs: 1000 },
    );
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
