/** Header an unauthenticated stateless client may send to be told apart from others at its address. */
export const CLIENT_KEY_HEADER = 'mcp-tasks-client-key';

const OPAQUE = /^[A-Za-z0-9._~-]{1,128}$/;
const addresses = new WeakMap<Request, string>();

/** Remembers the peer address of an HTTP request, for callers that cannot otherwise be told apart. */
export function tagClientAddress(request: Request, address: string | undefined): void {
  if (address !== undefined) addresses.set(request, address);
}

/**
 * Who an unauthenticated stateless request comes from, for quotas only (ownership stays id-as-capability): its peer
 * address, plus the opaque key it chose, if any. A self-chosen key can be rotated, so it is always paired with the
 * address, whose total is capped (see RateLimiter `perAddressClients`).
 */
export function clientKeyOf(request: unknown): { key: string; address: string | undefined } | undefined {
  if (!(request instanceof Request)) return undefined;
  const address = addresses.get(request);
  const chosen = request.headers.get(CLIENT_KEY_HEADER);
  const opaque = chosen !== null && OPAQUE.test(chosen) ? chosen : undefined;
  if (opaque === undefined) return address === undefined ? undefined : { key: address, address };
  return { key: `${address ?? ''}/${opaque}`, address: address ?? '' };
}
