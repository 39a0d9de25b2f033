import type { TaskRecord } from './TaskRecord.js';

/**
 * Reads and writes are scoped to an owner; `ANY_OWNER` is for callers whose capability is the task id itself. It
 * reaches only tasks created that way (`reachableById`), never an authenticated principal's (spec R63 R67).
 */
export const ANY_OWNER = Symbol('any-owner');
export type OwnerScope = string | typeof ANY_OWNER;

/** Owners that are authenticated principals start with this (records written before `reachableById` existed). */
export const PRINCIPAL_OWNER_PREFIX = 'principal:';

/** An authenticated principal as its tasks' owner records it: its client id and token subject (`sub`). */
export interface OwnerPrincipal {
  clientId: string | null;
  subject: string | null;
}

/** The owner of an authenticated principal's tasks, the one encoding every surface compares against. */
export function principalOwnerKey(principal: OwnerPrincipal): string {
  return `${PRINCIPAL_OWNER_PREFIX}${JSON.stringify([principal.clientId, principal.subject])}`;
}

/** The principal an owner stands for (principalOwnerKey read back); undefined for an unauthenticated owner. */
export function principalOfOwner(owner: string): OwnerPrincipal | undefined {
  if (!owner.startsWith(PRINCIPAL_OWNER_PREFIX)) return undefined;
  try {
    const [clientId, subject] = JSON.parse(owner.slice(PRINCIPAL_OWNER_PREFIX.length)) as unknown[];
    return {
      clientId: typeof clientId === 'string' ? clientId : null,
      subject: typeof subject === 'string' ? subject : null,
    };
  } catch {
    return undefined;
  }
}

/** Whether `scope` may see `record`: its owner, or any caller for a task whose id is the capability. */
export function inScope(record: TaskRecord, scope: OwnerScope): boolean {
  return scope === ANY_OWNER ? isReachableById(record) : record.owner === scope;
}

function isReachableById(record: TaskRecord): boolean {
  return record.reachableById ?? !record.owner.startsWith(PRINCIPAL_OWNER_PREFIX);
}
