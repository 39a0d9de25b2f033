import { TaskConnectionError } from '../client/index.js';
import { ConcurrencyGate } from './ConcurrencyGate.js';
import { Upstream, type UpstreamNotification, type UpstreamOptions } from './Upstream.js';
import { upstreamEventTypes, type ProxiedEventType } from './upstreamEventTypes.js';

export interface UpstreamPoolOptions extends UpstreamOptions {
  /** Upstream connections open at once (one per caller with work under way); default 64. */
  maxConnections?: number;
  /** A connection with nothing under way closes after this long; default 5 minutes. */
  idleMs?: number;
  /** How long work waits for a connection when all `maxConnections` are busy; default 30 s, then refused. */
  connectionWaitMs?: number;
}

export const DEFAULT_MAX_UPSTREAM_CONNECTIONS = 64;
export const DEFAULT_UPSTREAM_IDLE_MS = 300_000;
export const DEFAULT_UPSTREAM_CONNECTION_WAIT_MS = 30_000;

/** A caller's use of its connection, held for as long as a call (or a followed upstream task) is under way. */
export interface UpstreamLease {
  readonly upstream: Upstream;
  release(): void;
}

interface Entry {
  key: string;
  upstream: Promise<Upstream>;
  users: number;
  idleTimer: NodeJS.Timeout | undefined;
  lastUsed: number;
}

/** Every connection is busy and none came free in time. */
export class UpstreamBusyError extends TaskConnectionError {
  constructor(
    readonly maxConnections: number,
    readonly waitedMs: number,
  ) {
    super(
      `All ${maxConnections} upstream connections are busy with other callers' work (waited ${waitedMs} ms); retry later`,
    );
  }
}

/**
 * One upstream connection per caller (an authenticated principal, else the session): over a shared connection
 * nothing ties an upstream's question, log line or resource update to the call that caused it (a stdio server's
 * requests carry no such link), so one caller's questions and output would reach another. Each caller's connection
 * carries only that caller's calls, subscriptions and logging level; it closes when idle, and the number open is
 * bounded. Per-tool concurrency limits protect the upstream as a whole, so their gate is shared by all connections.
 */
export class UpstreamPool {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Map<string, Set<(notification: UpstreamNotification) => void>>();
  private readonly waiting: Array<() => void> = [];
  /**
   * A connection opened ahead of need and given to the next new caller, so a caller's first call does not wait for an
   * upstream to start (a stdio server may take seconds); the first is the one made at start to learn capabilities.
   */
  private spare: Promise<Upstream> | undefined;
  private closing = false;
  readonly gate = new ConcurrencyGate();
  readonly maxConnections: number;
  private readonly idleMs: number;
  private readonly waitMs: number;
  capabilities: Record<string, unknown> = {};
  serverInfo: { name: string; version: string } | undefined;
  /** The upstream's event types the proxy passes through, listed at start (see upstreamEventTypes). */
  eventTypes: ProxiedEventType[] = [];
  /**
   * For types whose descriptors list no tools: the type each tool's upstream tasks named as their event source, as
   * seen (a tool's later tasks on the proxy name it too). Bounded by the upstream's tools.
   */
  readonly learnedSources = new Map<string, string>();

  private constructor(private readonly options: UpstreamPoolOptions) {
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_UPSTREAM_CONNECTIONS;
    this.idleMs = options.idleMs ?? DEFAULT_UPSTREAM_IDLE_MS;
    this.waitMs = options.connectionWaitMs ?? DEFAULT_UPSTREAM_CONNECTION_WAIT_MS;
    for (const [name, value] of [
      ['maxConnections', this.maxConnections],
      ['idleMs', this.idleMs],
      ['connectionWaitMs', this.waitMs],
    ] as const) {
      if (!Number.isInteger(value) || value < (name === 'maxConnections' ? 1 : 0))
        throw new TypeError(`upstream.${name} must be a whole number${name === 'maxConnections' ? ' ≥ 1' : ''}`);
    }
  }

  /**
   * Connects once to learn what the upstream serves (the proxy advertises the same, and registers its event types);
   * that connection is kept.
   */
  static async connect(options: UpstreamPoolOptions): Promise<UpstreamPool> {
    const pool = new UpstreamPool(options);
    const first = await Upstream.connect(options);
    pool.capabilities = first.capabilities;
    pool.serverInfo = first.serverInfo;
    try {
      pool.eventTypes = await upstreamEventTypes(await first.current(), options.logger, pool.learnedSources);
    } catch (error) {
      await first.close();
      throw error;
    }
    pool.spare = Promise.resolve(first);
    return pool;
  }

  /** Connections open now (for metrics and tests). */
  get size(): number {
    return this.entries.size + (this.spare ? 1 : 0);
  }

  /** The caller's own connection, opened on first use; hold the lease for as long as the call is under way. */
  async acquire(key: string): Promise<UpstreamLease> {
    if (this.closing) throw new TaskConnectionError('The proxy is shutting down');
    let entry = this.entries.get(key);
    if (!entry) {
      await this.makeRoom();
      if (this.closing) throw new TaskConnectionError('The proxy is shutting down');
      entry = this.entries.get(key) ?? this.open(key);
    }
    const held = entry;
    held.users++;
    held.lastUsed = Date.now();
    clearTimeout(held.idleTimer);
    held.idleTimer = undefined;
    let upstream: Upstream;
    try {
      upstream = await held.upstream;
    } catch (error) {
      this.drop(held);
      throw error;
    }
    let released = false;
    return {
      upstream,
      release: () => {
        if (released) return;
        released = true;
        if (--held.users > 0) return;
        held.lastUsed = Date.now();
        if (this.waiting.length > 0) {
          // Someone waits for a connection: this one makes room now rather than after its idle time.
          this.retire(held);
          return;
        }
        held.idleTimer = setTimeout(() => this.retire(held), this.idleMs);
        held.idleTimer.unref();
      },
    };
  }

  /** Notifications from one caller's connection (log lines, resource updates, list changes) reach only that caller. */
  onNotification(key: string, listener: (notification: UpstreamNotification) => void): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const wake of this.waiting.splice(0)) wake();
    const closing: Array<Promise<void>> = [];
    if (this.spare) closing.push(this.spare.then((upstream) => upstream.close()).catch(() => {}));
    this.spare = undefined;
    for (const entry of this.entries.values()) {
      clearTimeout(entry.idleTimer);
      closing.push(entry.upstream.then((upstream) => upstream.close()).catch(() => {}));
    }
    this.entries.clear();
    await Promise.all(closing);
  }

  private open(key: string): Entry {
    const spare = this.spare;
    this.spare = undefined;
    const entry: Entry = {
      key,
      // A spare that failed to connect is no reason to fail this caller: it gets a connection of its own.
      upstream: spare ? spare.catch(() => Upstream.connect(this.options)) : Upstream.connect(this.options),
      users: 0,
      idleTimer: undefined,
      lastUsed: Date.now(),
    };
    entry.upstream.then(
      (upstream) => upstream.routes.onNotification((notification) => this.dispatch(key, notification)),
      () => {},
    );
    this.entries.set(key, entry);
    // The next new caller's connection starts now, while there is room for it.
    if (this.entries.size < this.maxConnections && !this.closing) {
      const next = Upstream.connect(this.options);
      next.then(
        (upstream) => upstream.preload().catch(() => {}),
        () => {
          if (this.spare === next) this.spare = undefined;
        },
      );
      this.spare = next;
    }
    return entry;
  }

  private dispatch(key: string, notification: UpstreamNotification): void {
    for (const listener of this.listeners.get(key) ?? []) listener(notification);
  }

  /** Below the cap: nothing to do. At it: close the least recently used idle connection, else wait for one. */
  private async makeRoom(): Promise<void> {
    const started = Date.now();
    while (this.entries.size >= this.maxConnections && !this.closing) {
      let oldest: Entry | undefined;
      for (const entry of this.entries.values())
        if (entry.users === 0 && (!oldest || entry.lastUsed < oldest.lastUsed)) oldest = entry;
      if (oldest) {
        this.retire(oldest);
        return;
      }
      const left = this.waitMs - (Date.now() - started);
      if (left <= 0) throw new UpstreamBusyError(this.maxConnections, Date.now() - started);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          const index = this.waiting.indexOf(done);
          if (index >= 0) this.waiting.splice(index, 1);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiting.push(done);
      });
    }
  }

  private retire(entry: Entry): void {
    if (this.entries.get(entry.key) !== entry || entry.users > 0) return;
    this.drop(entry);
    void entry.upstream.then((upstream) => upstream.close()).catch(() => {});
  }

  private drop(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    this.waiting.shift()?.();
  }
}
