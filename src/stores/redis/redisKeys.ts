/**
 * Key names of one store, all under one prefix. Scripts receive these names rather than building them, except
 * `task` (from an id) and the two global sets, which they build with the same concatenation as here.
 * For Redis Cluster, give the prefix a hash tag (e.g. `{mcp-tasks}:`) so every key of the store shares a slot.
 */
export interface RedisKeys {
  prefix: string;
  /** Hash: d (record JSON), v (version), x (index entry), e (expiresAt), l (lease), r (runner set key). */
  task(taskId: string): string;
  /** Zset, all scores 0, members `<createdAt, 16 digits>:<taskId>`: lexical order is list order. */
  owner(owner: string): string;
  /** Set of the owner's non-terminal task ids. */
  active(owner: string): string;
  /** String: the task id holding an idempotency key. */
  idempotency(owner: string, key: string): string;
  /** Set of the non-terminal, leased task ids a runner holds. */
  runner(runner: string): string;
  /** Zset of index entries by expiresAt. */
  expiry: string;
  /** Zset of non-terminal leased task ids by leaseUntil. */
  leases: string;
  /** Zset of the owner's fetched task ids by fetch time (the scripts build it from the owner-zset key). */
  fetchedOf(owner: string): string;
  /** Zset of every fetched task id by fetch time. */
  fetched: string;
  /** Total bytes of stored records; per owner in the hash `ob`, per task in the hash `bytes` (scripts only). */
  totalBytes: string;
  secret: string;
  channel: string;
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    prefix,
    task: (taskId) => `${prefix}t:${taskId}`,
    owner: (owner) => `${prefix}o:${owner}`,
    active: (owner) => `${prefix}a:${owner}`,
    // Length-prefixed owner: `k:a:b:c` could otherwise be owner `a` key `b:c` or owner `a:b` key `c`.
    idempotency: (owner, key) => `${prefix}k:${owner.length}:${owner}:${key}`,
    runner: (runner) => `${prefix}r:${runner}`,
    expiry: `${prefix}expiry`,
    leases: `${prefix}leases`,
    fetchedOf: (owner) => `${prefix}f:${owner}`,
    fetched: `${prefix}fetched`,
    totalBytes: `${prefix}tb`,
    secret: `${prefix}secret`,
    channel: `${prefix}events`,
  };
}

/** The owner-zset member of a task: fixed-width createdAt, so byte order is (createdAt, taskId) order. */
export function listMember(createdAt: number, taskId: string): string {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new Error(`createdAt must be epoch ms: ${createdAt}`);
  return `${String(createdAt).padStart(16, '0')}:${taskId}`;
}
