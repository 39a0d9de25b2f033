import { resolveCaller, type AuthInfoLike } from '../server/index.js';

/** The caller of stateless, unauthenticated traffic: such callers cannot be told apart (spec R66). */
export const ANONYMOUS_CALLER = 'anonymous';

/**
 * Whose upstream connection a request uses: the authenticated principal, else the session, as the runtime names a
 * task's owner (so a caller's plain calls and its tasks share one connection), else the anonymous caller.
 */
export function callerKeyOf(authInfo: AuthInfoLike | undefined, sessionId: string | undefined): string {
  const caller = resolveCaller(authInfo, sessionId, { bindToSession: true });
  return caller.authenticated || sessionId !== undefined ? caller.owner : ANONYMOUS_CALLER;
}
