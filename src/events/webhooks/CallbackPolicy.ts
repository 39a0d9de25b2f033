import { WebhookError } from './WebhookError.js';

/** The operator's say over callback URLs. */
export interface CallbackPolicyOptions {
  /**
   * Origins (`http://127.0.0.1:8080`, `https://hooks.internal`) let past the https and SSRF guards: a receiver on a
   * private network the operator trusts. The verification handshake still runs for them.
   */
  allowOrigins?: readonly string[];
  /**
   * URL prefixes the operator has consented to on the receivers' behalf (EVENTS-SPEC §7.6 path (b)): subscriptions
   * under them are active without a handshake. The https and SSRF guards still apply unless the origin is allowed.
   */
  trustedPrefixes?: readonly string[];
}

export const MAX_CALLBACK_URL_LENGTH = 2048;

/** Which callback URLs may be subscribed and delivered to (spec V62, V97, V98, V100). */
export class CallbackPolicy {
  private readonly origins: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(options: CallbackPolicyOptions = {}) {
    this.origins = new Set((options.allowOrigins ?? []).map((origin) => new URL(origin).origin));
    this.prefixes = options.trustedPrefixes ?? [];
  }

  /** Lets one more origin past the guards for the life of the process (the conformance control of §14). */
  allowOrigin(origin: string): string {
    const normalized = new URL(origin).origin;
    (this.origins as Set<string>).add(normalized);
    return normalized;
  }

  /** True when the URL's origin is allowlisted: any address, http allowed. */
  isAllowedOrigin(url: URL): boolean {
    return this.origins.has(url.origin);
  }

  /** True when the URL needs no handshake (operator consent). */
  isTrusted(url: string): boolean {
    return this.prefixes.some((prefix) => url.startsWith(prefix));
  }

  /**
   * A well-formed https URL without credentials (or one under an allowed origin); `invalid_params` otherwise. The
   * address check happens when the host is resolved, at the handshake and at every delivery (spec V99).
   */
  parse(url: unknown): URL {
    if (typeof url !== 'string' || url.length > MAX_CALLBACK_URL_LENGTH)
      throw new WebhookError(
        'invalid_params',
        `delivery.url must be a URL of at most ${MAX_CALLBACK_URL_LENGTH} characters`,
      );
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new WebhookError('invalid_params', 'delivery.url is not a valid URL');
    }
    if (parsed.username || parsed.password)
      throw new WebhookError('invalid_params', 'delivery.url must not carry credentials');
    if (this.isAllowedOrigin(parsed)) return parsed;
    if (parsed.protocol !== 'https:') throw new WebhookError('invalid_params', 'delivery.url must use https'); // spec V62
    return parsed;
  }
}
