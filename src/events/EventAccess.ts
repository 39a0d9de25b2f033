import type { Caller } from '../dialects/index.js';
import { principalOfOwner, stableJson, type OwnerPrincipal } from '../engine/index.js';
import { ErrorCodes, RpcError } from '../rpc/index.js';
import type { EventsErrorBody } from '../protocol/index.js';

/** What the operator's event authorization decides on: an authenticated principal, a type, its arguments. */
export interface EventAccessRequest {
  /** The principal as authentication found it: its client id and token subject (`sub`), each possibly null. */
  principal: OwnerPrincipal;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * May `principal` receive events of this type with these arguments? Asked at every `events/poll`, `events/stream` and
 * `events/subscribe` of an authenticated caller (spec V64), and again while a push stream or webhook subscription
 * lives (V65). A thrown error is a failure of the check, not a refusal.
 */
export type EventAuthorizer = (request: EventAccessRequest) => boolean | Promise<boolean>;

/** What ends a subscription whose principal lost access (spec V65 V110), in every mode. */
export const ACCESS_REVOKED: EventsErrorBody = {
  code: ErrorCodes.EVENTS_FORBIDDEN,
  message: 'Forbidden: access to this event type was revoked',
  data: { reason: 'revoked' },
};

/** A live push stream's re-verification (spec V65): why it must end now, if it must, and when to ask again. */
export interface StreamAccess {
  /** The longest wait before `ended` is asked again. */
  nextCheckMs(): number;
  ended(): Promise<EventsErrorBody | undefined>;
}

/** What ends a push stream whose credential expired: the requestor opens a new one with a fresh token and its cursor. */
export const CREDENTIALS_EXPIRED: EventsErrorBody = {
  code: ErrorCodes.EVENTS_FORBIDDEN,
  message: 'Forbidden: the credentials this stream was opened with have expired',
  data: { reason: 'credentials_expired' },
};

/** How often live subscriptions are re-verified with `authorize` (spec V65). */
export const DEFAULT_REVERIFY_MS = 60_000;

/** Decisions kept for re-verification at most; the oldest is forgotten first (it is asked again when needed). */
const MAX_REMEMBERED = 10_000;

/**
 * The operator's authorization of event access (`events.authorize`): checked when a subscription is made, and
 * re-verified at most every `reverifyMs` for the subscriptions that live on (push streams, webhook deliveries), whose
 * end on a refusal is `ACCESS_REVOKED`. Without an authorizer every principal may subscribe to every type.
 */
export class EventAccess {
  private readonly decisions = new Map<string, { allowed: boolean; at: number }>();

  constructor(
    private readonly authorize: EventAuthorizer | undefined,
    readonly reverifyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether access is checked at all (an authorizer is configured). */
  get checked(): boolean {
    return this.authorize !== undefined;
  }

  /** spec V64: refuses an authenticated caller the authorizer does not allow (-32012); the unauthenticated are not asked. */
  async check(caller: Caller, name: string, args: unknown): Promise<void> {
    const principal = caller.authenticated ? principalOfOwner(caller.owner) : undefined;
    if (!this.authorize || !principal) return;
    const request = { principal, name, arguments: argumentsOf(args) };
    let allowed: boolean;
    try {
      allowed = (await this.authorize(request)) === true;
    } catch {
      throw new RpcError(ErrorCodes.INTERNAL_ERROR, 'Access to this event type could not be checked; try again');
    }
    this.remember(request, allowed);
    if (!allowed)
      throw new RpcError(ErrorCodes.EVENTS_FORBIDDEN, `Forbidden: not permitted to receive ${name} events`, {
        reason: 'not_permitted',
      });
  }

  /**
   * spec V65: whether the principal still has access, asked again once its last answer is `reverifyMs` old. A check
   * that fails keeps the last answer (allowed when there is none): an unreachable authority revokes nothing.
   */
  async stillAllowed(request: EventAccessRequest): Promise<boolean> {
    if (!this.authorize) return true;
    const key = keyOf(request);
    const known = this.decisions.get(key);
    if (known && this.now() - known.at < this.reverifyMs) return known.allowed;
    try {
      const allowed = (await this.authorize(request)) === true;
      this.remember(request, allowed);
      return allowed;
    } catch {
      return known?.allowed ?? true;
    }
  }

  /**
   * The re-verification of one live push stream: its credential's expiry (the caller's `credentialExpiresAt`), and the
   * authorizer's answer when one is configured and the caller is a principal. Undefined when neither applies.
   */
  forStream(caller: Caller, name: string, args: unknown): StreamAccess | undefined {
    const principal = caller.authenticated ? principalOfOwner(caller.owner) : undefined;
    const request = this.authorize && principal ? { principal, name, arguments: argumentsOf(args) } : undefined;
    const expiresAt = caller.credentialExpiresAt;
    if (!request && expiresAt === undefined) return undefined;
    return {
      nextCheckMs: () =>
        Math.min(
          request ? this.reverifyMs : Infinity,
          expiresAt === undefined ? Infinity : Math.max(1, expiresAt - this.now()),
        ),
      ended: async () => {
        if (expiresAt !== undefined && this.now() >= expiresAt) return CREDENTIALS_EXPIRED;
        if (request && !(await this.stillAllowed(request))) return ACCESS_REVOKED;
        return undefined;
      },
    };
  }

  private remember(request: EventAccessRequest, allowed: boolean): void {
    const key = keyOf(request);
    this.decisions.delete(key);
    this.decisions.set(key, { allowed, at: this.now() });
    if (this.decisions.size > MAX_REMEMBERED) this.decisions.delete(this.decisions.keys().next().value as string);
  }
}

function argumentsOf(args: unknown): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

function keyOf(request: EventAccessRequest): string {
  return stableJson([request.principal, request.name, request.arguments]);
}
