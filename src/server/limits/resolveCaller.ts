import { ANY_OWNER, principalOwnerKey } from '../../engine/index.js';
import type { Caller } from '../../dialects/index.js';
import type { AuthInfoLike } from '../ServerLike.js';

export interface CallerOptions {
  /** Strict mode: without authentication, tasks are reachable only from the session that created them. */
  bindToSession: boolean;
}

/**
 * Task ownership (spec R63–R68): an authenticated principal owns its tasks outright; without one, the session (or
 * long-lived connection) owns them for listing, and the unguessable task id is the capability for everything else.
 */
export function resolveCaller(
  authInfo: AuthInfoLike | undefined,
  sessionKey: string | undefined,
  options: CallerOptions,
  client?: { key: string; address: string | undefined },
): Caller {
  const principal = principalOwnerOf(authInfo);
  if (principal !== undefined) {
    // The SDK's AuthInfo.expiresAt is in seconds since the epoch.
    const expiresAt = authInfo?.expiresAt;
    return {
      owner: principal,
      scope: principal,
      listable: true,
      authenticated: true,
      ...(typeof expiresAt === 'number' && Number.isFinite(expiresAt) && { credentialExpiresAt: expiresAt * 1000 }),
    };
  }
  if (sessionKey !== undefined) {
    const owner = `session:${sessionKey}`;
    return { owner, scope: options.bindToSession ? owner : ANY_OWNER, listable: true, authenticated: false };
  }
  // Stateless and unauthenticated: callers cannot be told apart for ownership, so nothing can be listed (spec R66);
  // their address (and self-chosen key) only keeps one client's quotas from being everyone's.
  if (client === undefined) return { owner: 'anonymous', scope: ANY_OWNER, listable: false, authenticated: false };
  return {
    owner: `anonymous:${client.key}`,
    scope: ANY_OWNER,
    listable: false,
    authenticated: false,
    ...(client.key !== client.address && { quotaGroup: `anonymous:${client.address ?? ''}` }),
  };
}

/** The owner an authenticated principal's tasks get (its client id and `extra.sub`); undefined for anonymous. */
export function principalOwnerOf(authInfo: AuthInfoLike | undefined): string | undefined {
  const subject = typeof authInfo?.extra?.['sub'] === 'string' ? authInfo.extra['sub'] : undefined;
  if (!authInfo || !(authInfo.clientId || subject)) return undefined;
  return principalOwnerKey({ clientId: authInfo.clientId ?? null, subject: subject ?? null });
}
