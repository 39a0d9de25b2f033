import { ErrorCodes, isObject, RpcError } from '../rpc/index.js';
import type { StreamControls } from './StreamControls.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/** The prefix of the diagnostic control tools of EVENTS-SPEC §14. */
export const CONFORMANCE_TOOL_PREFIX = 'events_conformance_';

const byName = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
} as const;
const byId = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const byKey = {
  type: 'object',
  properties: { principal: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' } },
  required: ['principal', 'name', 'url'],
} as const;
const none = { type: 'object', properties: {} } as const;

/** What the subscription, quota and restart controls ask of the events front. */
export interface ConformanceHost {
  /** Subscribes `principal` to the untasked type `name` at `url` (a fresh secret); answers the subscription id. */
  subscribeAs(principal: string, name: string, url: string): Promise<string>;
  /** Whether `principal` holds a live subscription to `name` at `url`. */
  subscriptionExists(principal: string, name: string, url: string): Promise<boolean>;
  /** `active`, `suspended` or `absent`, whoever holds it. */
  subscriptionState(id: string): Promise<string>;
  /** One type's per-type subscription cap. */
  quota(): { name: string; max: number } | undefined;
  /** Rebuilds the in-process event state over the same store; answers the generation it moves to. */
  restart(): number;
  generation(): number;
}

/** The controls served, as `tools/list` entries. */
const TOOLS = [
  {
    name: 'events_conformance_yield_error',
    description: 'Sends notifications/events/error to every live stream of the event type; they stay open',
    inputSchema: byName,
  },
  {
    name: 'events_conformance_yield_gap',
    description: 'Sends a fresh notifications/events/active with truncated: true to every live stream of the type',
    inputSchema: byName,
  },
  {
    name: 'events_conformance_terminate',
    description: 'Ends every live stream of the event type with notifications/events/terminated',
    inputSchema: byName,
  },
  {
    name: 'events_conformance_allow_callback_origin',
    description: 'Lets webhook callbacks under this origin past the https and SSRF guards for the life of the process',
    inputSchema: { type: 'object', properties: { origin: { type: 'string' } }, required: ['origin'] },
  },
  {
    name: 'events_conformance_subscribe_as',
    description: 'Subscribes another principal (webhook) to an untasked event type; answers the subscription id',
    inputSchema: byKey,
  },
  {
    name: 'events_conformance_subscription_exists',
    description: 'Whether that principal holds a webhook subscription to the type at the url: "true" or "false"',
    inputSchema: byKey,
  },
  {
    name: 'events_conformance_subscription_state',
    description: "The webhook subscription's state: active, suspended or absent",
    inputSchema: byId,
  },
  {
    name: 'events_conformance_quota',
    description: 'JSON {"name", "max"}: an event type and its cap on one principal\'s webhook subscriptions',
    inputSchema: none,
  },
  {
    name: 'events_conformance_restart',
    description: 'Rebuilds the event state over the same store (live streams end); answers the new generation',
    inputSchema: none,
  },
  {
    name: 'events_conformance_generation',
    description: 'The current restart generation',
    inputSchema: none,
  },
  {
    name: 'events_conformance_webhook_gap',
    description: 'Queues a gap envelope to the webhook subscription',
    inputSchema: byId,
  },
  {
    name: 'events_conformance_webhook_terminate',
    description: 'Queues a terminated envelope to the webhook subscription and ends it',
    inputSchema: byId,
  },
] as const;

/** The controls that need webhook delivery. */
const WEBHOOK_ONLY = /webhook|callback|subscri|quota/;

/**
 * The conformance suite's diagnostic controls (EVENTS-SPEC §14) as ordinary tools, served only when the operator
 * asks for them (`events.conformanceControls`, as mcpkit gates them behind a flag): a test fixture's, never a
 * production server's, since any caller may use them.
 */
export class ConformanceControls {
  constructor(
    private readonly streams: StreamControls,
    private readonly webhooks: WebhookDeliveries | undefined,
    private readonly host: ConformanceHost,
  ) {}

  get tools(): ReadonlyArray<Record<string, unknown>> {
    return TOOLS.filter((tool) => this.webhooks || !WEBHOOK_ONLY.test(tool.name));
  }

  has(name: unknown): boolean {
    return typeof name === 'string' && this.tools.some((tool) => tool['name'] === name);
  }

  /** Runs a control; answers its text. */
  async run(name: string, args: unknown): Promise<string> {
    const input = isObject(args) ? args : {};
    const text = (key: string): string => {
      const value = input[key];
      if (typeof value !== 'string' || value.length === 0)
        throw new RpcError(ErrorCodes.INVALID_PARAMS, `Invalid params: ${name} needs a string ${key}`);
      return value;
    };
    switch (name) {
      case 'events_conformance_yield_error':
        return `${this.streams.send(text('name'), 'error')} streams`;
      case 'events_conformance_yield_gap':
        return `${this.streams.send(text('name'), 'gap')} streams`;
      case 'events_conformance_terminate':
        return `${this.streams.send(text('name'), 'terminate')} streams`;
      case 'events_conformance_allow_callback_origin': {
        const policy = (this.webhooks as { policy?: { allowOrigin?(origin: string): string } }).policy;
        if (!policy?.allowOrigin)
          throw new RpcError(ErrorCodes.INVALID_PARAMS, 'The webhook deliveries take no origins');
        try {
          return policy.allowOrigin(text('origin'));
        } catch {
          throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: origin must be a URL origin');
        }
      }
      case 'events_conformance_subscribe_as':
        return this.host.subscribeAs(text('principal'), text('name'), text('url'));
      case 'events_conformance_subscription_exists':
        return String(await this.host.subscriptionExists(text('principal'), text('name'), text('url')));
      case 'events_conformance_subscription_state':
        return this.host.subscriptionState(text('id'));
      case 'events_conformance_quota': {
        const quota = this.host.quota();
        if (!quota) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'No event type offers webhook delivery');
        return JSON.stringify(quota);
      }
      case 'events_conformance_restart':
        return String(this.host.restart());
      case 'events_conformance_generation':
        return String(this.host.generation());
      case 'events_conformance_webhook_gap':
        return String(await (this.webhooks as WebhookDeliveries).gap(text('id'), null));
      default:
        return String(
          await (this.webhooks as WebhookDeliveries).terminate(
            { id: text('id') },
            {
              code: ErrorCodes.EVENTS_NOT_FOUND,
              message: 'Subscription terminated (events_conformance_webhook_terminate)',
              data: { kind: 'subscription', reason: 'terminated' },
            },
          ),
        );
    }
  }
}
