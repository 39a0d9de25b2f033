/** What a retention computation needs to know of a task; the engine's record has these fields. */
export interface RetentionFacts {
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the task's first terminal status, if it has one. */
  terminalAt?: number;
  /** Epoch ms after which the store may delete the task, or null when it keeps it. */
  expiresAt: number | null;
  retention: { kind: 'ttl'; ttlMs: number | null } | { kind: 'keepAlive'; keepAliveMs: number | null };
}

/**
 * The actual retention counted from creation, as 2025-11-25 `ttl` and the extension's `ttlMs` report it: what the
 * store will honour, or null when unlimited (spec R30).
 */
export function ttlFromCreation(task: RetentionFacts): number | null {
  if (task.expiresAt !== null) return task.expiresAt - task.createdAt;
  return task.retention.kind === 'ttl' ? task.retention.ttlMs : null;
}

/** The actual retention counted from the terminal status, as SEP-1686 `keepAlive` reports it (spec 4.5), or null. */
export function keepAliveOf(task: RetentionFacts): number | null {
  if (task.retention.kind === 'keepAlive') return task.retention.keepAliveMs;
  return task.expiresAt === null ? null : Math.max(0, task.expiresAt - (task.terminalAt ?? task.createdAt));
}

/**
 * When a receiver may delete a task whose retention counts from creation (spec R31, A9), in epoch ms, or undefined
 * when the wire gave no usable instant.
 */
export function expiryFromCreation(
  createdAt: string | undefined,
  ttlMs: number | null | undefined,
): number | undefined {
  if (typeof ttlMs !== 'number' || createdAt === undefined) return undefined;
  const created = Date.parse(createdAt);
  return Number.isFinite(created) ? created + ttlMs : undefined;
}
