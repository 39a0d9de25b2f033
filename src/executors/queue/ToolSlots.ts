import type { RedisClient } from 'bullmq';

// KEYS[1]: the tool's sorted set of runs (member: task id, score: lease end in Redis time).
// ARGV: task id, limit, lease ms. Lapsed leases (a worker that died) are dropped first.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return 1
`;

// KEYS[1]: the tool's runs; ARGV: task id, lease ms. Extends a run this worker still holds.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local changed = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return changed
`;

const RELEASE = `return redis.call('ZREM', KEYS[1], ARGV[1])`;

const COMMANDS = { acquire: 'mcpTasksToolAcquire', renew: 'mcpTasksToolRenew', release: 'mcpTasksToolRelease' };

/**
 * Per-tool concurrency limits across every worker of a queue: a counting semaphore per tool in Redis, one entry per
 * running task, each with a lease this worker renews while the task runs. A worker that dies without releasing its
 * entries frees them once their lease lapses (the same lease the task store uses).
 */
export class ToolSlots {
  private readonly held = new Map<string, string>();
  private prepared: Promise<RedisClient> | undefined;

  constructor(
    private readonly client: () => Promise<RedisClient>,
    private readonly keyPrefix: string,
    private readonly leaseMs: number,
  ) {}

  /** Takes a run of `tool` for `taskId` unless `limit` runs already hold one. */
  async acquire(tool: string, limit: number, taskId: string): Promise<boolean> {
    const client = await this.redis();
    const taken = await client.runCommand(COMMANDS.acquire, [this.key(tool), taskId, limit, this.leaseMs]);
    if (Number(taken) === 1) this.held.set(taskId, tool);
    return Number(taken) === 1;
  }

  async release(taskId: string): Promise<void> {
    const tool = this.held.get(taskId);
    if (tool === undefined) return;
    this.held.delete(taskId);
    const client = await this.redis();
    await client.runCommand(COMMANDS.release, [this.key(tool), taskId]);
  }

  /** Extends the leases of every run this worker holds. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const client = await this.redis();
    await Promise.all(
      [...this.held].map(([taskId, tool]) => client.runCommand(COMMANDS.renew, [this.key(tool), taskId, this.leaseMs])),
    );
  }

  private key(tool: string): string {
    return `${this.keyPrefix}:tool-runs:${tool}`;
  }

  private redis(): Promise<RedisClient> {
    this.prepared ??= this.client().then((client) => {
      client.defineCommand(COMMANDS.acquire, { numberOfKeys: 1, lua: ACQUIRE });
      client.defineCommand(COMMANDS.renew, { numberOfKeys: 1, lua: RENEW });
      client.defineCommand(COMMANDS.release, { numberOfKeys: 1, lua: RELEASE });
      return client;
    });
    // A failed connection is tried again on the next call.
    this.prepared.catch(() => {
      this.prepared = undefined;
    });
    return this.prepared;
  }
}
