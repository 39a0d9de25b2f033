import type { RedisClient } from 'bullmq';

// Redis time, so workers whose clocks differ agree on when a lease lapses.
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// KEYS: one sorted set of runs per limit (member: task id, score: lease end). ARGV: task id, lease ms, then the limit
// of each key. Lapsed leases (a worker that died) are dropped first. Returns 0 when every limit let the run in, else
// the position of the first key at its limit (nothing is taken then).
const ACQUIRE = `${NOW}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[i + 2]) and not redis.call('ZSCORE', key, ARGV[1]) then
    return i
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2]) * 2)
end
return 0
`;

// KEYS: the sorted sets of one run; ARGV: its task id.
const RELEASE = `
for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[1]) end
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

// A run is under one or two limits (its owner's, its tool's); a command is defined for each count of keys.
const acquireOf = (keys: number) => `mcpTasksFleetAcquire${keys}`;
const releaseOf = (keys: number) => `mcpTasksFleetRelease${keys}`;
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
    const refused = Number(
      await client.runCommand(acquireOf(keys.length), [
        ...keys,
        taskId,
        this.leaseMs,
        ...limits.map((limit) => limit.limit),
      ]),
    );
    if (refused > 0) return limits[refused - 1];
    this.held.set(taskId, keys);
    return undefined;
  }

  async release(taskId: string): Promise<void> {
    const keys = this.held.get(taskId);
    if (!keys) return;
    this.held.delete(taskId);
    const client = await this.redis();
    await client.runCommand(releaseOf(keys.length), [...keys, taskId]);
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

  private key(limit: FleetLimit): string {
    return `${this.keyPrefix}:${limit.kind}-runs:${limit.name}`;
  }

  private workerKeys(): [string, string] {
    return [`${this.keyPrefix}:workers`, `${this.keyPrefix}:worker-slots`];
  }

  private redis(): Promise<RedisClient> {
    this.prepared ??= this.client().then((client) => {
      for (const keys of [1, 2]) {
        client.defineCommand(acquireOf(keys), { numberOfKeys: keys, lua: ACQUIRE });
        client.defineCommand(releaseOf(keys), { numberOfKeys: keys, lua: RELEASE });
      }
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
