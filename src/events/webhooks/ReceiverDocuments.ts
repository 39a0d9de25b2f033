import { getWebhookDocument } from './postWebhook.js';

/** Where a receiver publishes the callback paths it accepts deliveries on (EVENTS-SPEC §7.6 (d)). */
export const RECEIVER_DOCUMENT_PATH = '/.well-known/mcp-webhook-receiver.json';

/** How long an origin's document (or its absence) is kept before it is read again. */
const CACHE_MS = 5 * 60_000;
/** Origins remembered at most; the oldest is forgotten first. */
const MAX_ORIGINS = 1000;
/** The most of a document read: a list of path prefixes. */
const MAX_DOCUMENT_BYTES = 16 * 1024;

/**
 * A receiver's consent published at its origin (spec V100 (d)): `{"receivers": ["/prefix/", …]}` served at
 * `/.well-known/mcp-webhook-receiver.json` of an https origin; a callback URL under a listed path prefix counts as
 * verified, without the handshake. Read on the deliveries' guarded path (V105: public addresses unless the origin is
 * allowlisted; no redirect), cached per origin; anything but a valid document is no consent, and the handshake runs.
 */
export class ReceiverDocuments {
  private readonly cache = new Map<string, { prefixes: readonly string[]; until: number }>();

  constructor(
    private readonly now: () => number,
    private readonly timeoutMs: number,
  ) {}

  async consents(url: URL, open: boolean): Promise<boolean> {
    // The document is the callback's https origin's (a plain-http receiver, allowlisted for development, is not asked).
    if (url.protocol !== 'https:') return false;
    const prefixes = await this.prefixesOf(url, open);
    // `/hooks/` covers what is under it; `/hooks` covers itself and what is under it, never `/hooksmith`.
    return prefixes.some(
      (prefix) => url.pathname === prefix || url.pathname.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
    );
  }

  private async prefixesOf(url: URL, open: boolean): Promise<readonly string[]> {
    const now = this.now();
    const cached = this.cache.get(url.origin);
    if (cached && cached.until > now) return cached.prefixes;
    const outcome = await getWebhookDocument(
      new URL(RECEIVER_DOCUMENT_PATH, url.origin),
      open,
      this.timeoutMs,
      MAX_DOCUMENT_BYTES,
    );
    const prefixes = outcome.ok ? parsePrefixes(outcome.body ?? '') : [];
    this.cache.delete(url.origin);
    if (this.cache.size >= MAX_ORIGINS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(url.origin, { prefixes, until: now + CACHE_MS });
    return prefixes;
  }
}

/** The listed path prefixes: absolute paths only (a full URL or a relative path consents to nothing). */
function parsePrefixes(body: string): string[] {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return [];
  }
  const receivers = (document as { receivers?: unknown } | null)?.receivers;
  if (!Array.isArray(receivers)) return [];
  return receivers.filter(
    (prefix): prefix is string => typeof prefix === 'string' && prefix.startsWith('/') && !prefix.startsWith('//'),
  );
}
