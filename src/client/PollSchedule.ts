/** Backoff used between polls when the server suggests no interval, and between retries of failed polls. */
export interface PollPolicy {
  /** First gap, in ms. */
  initialMs: number;
  /** Largest gap, in ms. */
  maxMs: number;
  /** Growth per poll without a server hint. */
  factor: number;
  /** Fraction of each gap that is randomised (0 = none), so many clients do not poll in lockstep. */
  jitter: number;
  /** Floor for any gap, including a server's `pollInterval` of 0. */
  minMs: number;
}

export const DEFAULT_POLL_POLICY: Readonly<PollPolicy> = {
  initialMs: 500,
  maxMs: 5000,
  factor: 1.6,
  jitter: 0.25,
  minMs: 50,
};

/** Decides how long to wait before the next `tasks/get`. */
export class PollSchedule {
  private readonly policy: PollPolicy;
  private attempt = 0;

  constructor(
    policy: Partial<PollPolicy> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.policy = { ...DEFAULT_POLL_POLICY, ...policy };
  }

  /** The gap before the next poll. A server hint wins (spec R18, R32, E6); otherwise the backoff grows. */
  next(serverIntervalMs?: number): number {
    if (serverIntervalMs !== undefined && Number.isFinite(serverIntervalMs) && serverIntervalMs >= 0) {
      return Math.max(this.policy.minMs, serverIntervalMs);
    }
    return this.backoff(this.attempt++);
  }

  /** The gap before retrying after the n-th consecutive failure (n from 0). */
  retryDelay(failures: number): number {
    return this.backoff(failures);
  }

  /** Start the backoff over, e.g. after the status changed. */
  reset(): void {
    this.attempt = 0;
  }

  private backoff(step: number): number {
    const { initialMs, maxMs, factor, jitter, minMs } = this.policy;
    const base = Math.min(maxMs, initialMs * Math.pow(factor, step));
    // Jitter only ever shortens the gap, so the cap stays a cap.
    return Math.max(minMs, Math.round(base * (1 - jitter * this.random())));
  }
}
