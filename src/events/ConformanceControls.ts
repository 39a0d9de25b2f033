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

/**
 * The conformance suite's diagnostic controls (EVENTS-SPEC §14) as ordinary tools, served only when the operator
 * asks for them (`events.conformanceControls`, as mcpkit gates them behind a flag): a test fixture's, never a
 * production server's, since any caller may use them.
 */
export class ConformanceControls {
  constructor(
    private readonly streams: StreamControls,
    private readonly webhooks: WebhookDeliveries | undefined,
  ) {}

  get tools(): ReadonlyArray<Record<string, unknown>> {
    return TOOLS.filter((tool) => this.webhooks || (!tool.name.includes('webhook') && !tool.name.includes('callback')));
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
