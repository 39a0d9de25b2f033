import { ANY_OWNER } from '../../engine/index.js';
import type { Caller } from './DialectContext.js';

/** The ownership a new task gets from its creator: its owner, and whether its id alone reaches it (spec R63 R64). */
export function ownedBy(caller: Caller): { owner: string; reachableById: boolean } {
  return { owner: caller.owner, reachableById: caller.scope === ANY_OWNER };
}
