import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal arguments compare equal (spec V66). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The subscription id: `sub_` + a digest of the key `(principal, url, name, arguments)` (spec V66, V69), the same
 * across refreshes and restarts and on every instance. A routing handle, never an input (V70).
 */
export function webhookSubscriptionId(owner: string, url: string, name: string, args: string): string {
  const digest = createHash('sha256')
    .update(canonicalJson([owner, url, name, args]))
    .digest('base64url');
  return `sub_${digest.slice(0, 32)}`;
}
