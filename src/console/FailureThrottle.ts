export interface FailureThrottleOptions {
  /** Failures one client address may have within a window before it is refused. Default 10. */
  maxFailures?: number;
  /** The window, from an address's first failure. Default 60 s. */
  windowMs?: number;
  /** Addresses remembered at once; past it the oldest is forgotten. Default 10 000. */
  maxAddresses?: number;
  now?: () => number;
}

/**
 * Failed console logins per client address: past `maxFailures` within a window, the address is refused (429) until
 * the window ends, so tokens cannot be tried at the speed of the network. Memory is bounded: at most `maxAddresses`
 * windows are kept, the oldest forgotten first (an address forgotten only starts counting again).
 */
export class FailureThrottle {
  private readonly windows = new Map<string, { start: number; failures: number }>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;

  constructor(options: FailureThrottleOptions = {}) {
    this.maxFailures = options.maxFailures ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxAddresses = options.maxAddresses ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Seconds until `address` may try again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const window = this.current(address);
    if (!window || window.failures < this.maxFailures) return undefined;
    return Math.max(1, Math.ceil((window.start + this.windowMs - this.now()) / 1000));
  }

  fail(address: string): void {
    const window = this.current(address);
    if (window) {
      window.failures++;
      return;
    }
    if (this.windows.size >= this.maxAddresses) this.windows.delete(this.windows.keys().next().value as string);
    this.windows.set(address, { start: this.now(), failures: 1 });
  }

  /** How many addresses are remembered. */
  get size(): number {
    return this.windows.size;
  }

  private current(address: string): { start: number; failures: number } | undefined {
    const window = this.windows.get(address);
    if (window && this.now() - window.start >= this.windowMs) {
      this.windows.delete(address);
      return undefined;
    }
    return window;
  }
}
