import type { RedisClient } from 'bullmq';

// Redis time, so workers whose clocks differ agree on when a lease lapses.
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// KEYS: one sorted set of runs per limit (member: task id, score: lease end), `n` of them, then the sets of runs
// released with this call. ARGV: task id, lease ms, the limit of each of the n keys, then the task id of each released
// set. The released runs go first, then lapsed leases (a worker that died). Returns 0 when every limit let the run in,
// else the position of the first key at its limit (nothing is taken then).
const acquireLua = (n: number) => `${NOW}
for j = ${n + 1}, #KEYS do redis.call('ZREM', KEYS[j], ARGV[j + 2]) end
for i = 1, ${n} do
  local key = KEYS[i]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[i + 2]) and not redis.call('ZSCORE', key, ARGV[1]) then
    return i
  end
end
for i = 1, ${n} do
  redis.call('ZADD', KEYS[i], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]) * 2)
end
return 0
`;

// KEYS: sets of runs; ARGV: the task id released from each.
const RELEASE = `
for j, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[j]) end
return 0
`;

// KEYS[1]: a sorted set of runs; ARGV: task id, lease ms. Extends a run this worker still holds.
const RENEW = `${NOW}
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 0
`;

// KEYS[1]: the workers' leases (sorted set), KEYS[2]: their slots (hash). ARGV: runner id, slots, lease ms. Renews this
// worker's entry, drops lapsed ones, and returns the slots of the live workers together.
const REGISTER = `${NOW}
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #dead > 0 then
  redis.call('HDEL', KEYS[2], unpack(dead))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]) * 2)
local total = 0
for _, slots in ipairs(redis.call('HVALS', KEYS[2])) do total = total + tonumber(slots) end
return total
`;

const UNREGISTER = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 0
`;

// A run is under one or two limits (its owner's, its tool's), and up to MAX_RELEASED_KEYS sets of released runs go
// with it; a command is defined for each count of keys.
const acquireOf = (keys: number, released: number) => `mcpTasksFleetAcquire${keys}r${released}`;
const releaseOf = (keys: number) => `mcpTasksFleetRelease${keys}`;
const MAX_RELEASED_KEYS = 8;
/**
 * How long a release may wait for this worker's next acquire to carry it (a busy worker's next job comes sooner)
 * before it is sent on its own. Until then the run still counts against its limits, by at most this long.
 */
const RELEASE_DELAY_MS = 20;
const COMMANDS = {
  renew: 'mcpTasksFleetRenew',
  register: 'mcpTasksFleetRegister',
  unregister: 'mcpTasksFleetUnregister',
};

/** A limit a run must fit under: a kind of run (one owner's, one tool's) and how many of them may run at once. */
export interface FleetLimit {
  kind: 'owner' | 'tool';
  name: string;
  limit: number;
}

/**
 * Counts shared by every worker of a queue, in its Redis: counting semaphores of running tasks (per owner, per tool),
 * one entry per running task with a lease this worker renews while the task runs, and the workers themselves with
 * their slots. A worker that dies (even by SIGKILL) never leaks a count: its entries go once their lease lapses (the
 * same lease the task store uses).
 */
export class FleetSlots {
  private readonly held = new Map<string, string[]>();
  /** Released runs not sent yet: the sets of each, by task id (see RELEASE_DELAY_MS). */
  private readonly released = new Map<string, string[]>();
  private releaseTimer: NodeJS.Timeout | undefined;
  private sendAtOnce = false;
  private prepared: Promise<RedisClient> | undefined;

  constructor(
    private readonly client: () => Promise<RedisClient>,
    private readonly keyPrefix: string,
    private readonly leaseMs: number,
  ) {}

  /**
   * Takes a run for `taskId` under every limit, or none: answers the limit that was reached, or undefined when the run
   * may start.
   */
  async acquire(taskId: string, limits: FleetLimit[]): Promise<FleetLimit | undefined> {
    if (limits.length === 0) return undefined;
    const keys = limits.map((limit) => this.key(limit));
    const client = await this.redis();
    // The releases waiting to be sent go with it: one round trip for both.
    const released = this.takeReleased();
    let refused: number;
    try {
      refused = Number(
        await client.runCommand(acquireOf(keys.length, released.keys.length), [
          ...keys,
          ...released.keys,
          taskId,
          this.leaseMs,
          ...limits.map((limit) => limit.limit),
          ...released.taskIds,
        ]),
      );
    } catch (error) {
      // Sent again later (removing a run twice changes nothing); entries never sent lapse with their lease.
      this.putBack(released);
      throw error;
    }
    if (refused > 0) return limits[refused - 1];
    this.held.set(taskId, keys);
    return undefined;
  }

  /**
   * Gives the run's slots back: with this worker's next acquire, or on its own within RELEASE_DELAY_MS. A release
   * that cannot be sent lapses with its lease.
   */
  async release(taskId: string): Promise<void> {
    const keys = this.held.get(taskId);
    if (!keys) return;
    this.held.delete(taskId);
    this.released.set(taskId, keys);
    if (this.sendAtOnce) return this.flush();
    this.releaseTimer ??= setTimeout(() => void this.flush().catch(() => {}), RELEASE_DELAY_MS);
  }

  /** From now on each release is sent at once, and those waiting now are sent: the worker is stopping. */
  stopDeferring(): Promise<void> {
    this.sendAtOnce = true;
    return this.flush();
  }

  /** Sends the releases waiting for an acquire now. */
  private async flush(): Promise<void> {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    // Entries a failure leaves unsent lapse with their lease.
    while (this.released.size > 0) {
      const { keys, taskIds } = this.takeReleased();
      const client = await this.redis();
      await client.runCommand(releaseOf(keys.length), [...keys, ...taskIds]);
    }
  }

  private putBack(released: { keys: string[]; taskIds: string[] }): void {
    released.taskIds.forEach((taskId, i) => {
      const sets = this.released.get(taskId) ?? [];
      if (!this.released.has(taskId)) this.released.set(taskId, sets);
      sets.push(released.keys[i] as string);
    });
    if (this.released.size > 0 && !this.sendAtOnce)
      this.releaseTimer ??= setTimeout(() => void this.flush().catch(() => {}), RELEASE_DELAY_MS);
  }

  /** Extends the leases of every run this worker holds, in one round trip. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const client = await this.redis();
    const batch = client.pipeline();
    for (const [taskId, keys] of this.held) {
      for (const key of keys) batch.runCommand(COMMANDS.renew, [key, taskId, this.leaseMs]);
    }
    await batch.exec();
  }

  /** Renews this worker's entry (`slots` tasks at once) and answers the slots of every live worker together. */
  async register(runnerId: string, slots: number): Promise<number> {
    const client = await this.redis();
    return Number(await client.runCommand(COMMANDS.register, [...this.workerKeys(), runnerId, slots, this.leaseMs]));
  }

  /** Removes this worker's entry at shutdown (a dead worker's lapses with its lease). */
  async unregister(runnerId: string): Promise<void> {
    const client = await this.redis();
    await client.runCommand(COMMANDS.unregister, [...this.workerKeys(), runnerId]);
  }

  /** Up to MAX_RELEASED_KEYS sets of the releases waiting, with the task id of each; those taken are forgotten. */
  private takeReleased(): { keys: string[]; taskIds: string[] } {
    const keys: string[] = [];
    const taskIds: string[] = [];
    for (const [taskId, sets] of this.released) {
      if (keys.length + sets.length > MAX_RELEASED_KEYS) break;
      this.released.delete(taskId);
      for (const key of sets) {
        keys.push(key);
        taskIds.push(taskId);
      }
    }
    if (this.released.size === 0) {
      clearTimeout(this.releaseTimer);
      this.releaseTimer = undefined;
    }
    return { keys, taskIds };
  }

  private key(limit: FleetLimit): string {
    return `${this.keyPrefix}:${limit.kind}-runs:${limit.name}`;
  }

  private workerKeys(): [string, string] {
    return [`${this.keyPrefix}:workers`, `${this.keyPrefix}:worker-slots`];
  }

  private redis(): Promise<RedisClient> {
    this.prepared ??= this.client().then((client) => {
      for (const keys of [1, 2])
        for (let released = 0; released <= MAX_RELEASED_KEYS; released++)
          client.defineCommand(acquireOf(keys, released), { numberOfKeys: keys + released, lua: acquireLua(keys) });
      for (let keys = 1; keys <= MAX_RELEASED_KEYS; keys++)
        client.defineCommand(releaseOf(keys), { numberOfKeys: keys, lua: RELEASE });
      client.defineCommand(COMMANDS.renew, { numberOfKeys: 1, lua: RENEW });
      client.defineCommand(COMMANDS.register, { numberOfKeys: 2, lua: REGISTER });
      client.defineCommand(COMMANDS.unregister, { numberOfKeys: 2, lua: UNREGISTER });
      return client;
    });
    // A failed connection is tried again on the next call.
    this.prepared.catch(() => {
      this.prepared = undefined;
    });
    return this.prepared;
  }
}
