import type { Caller, DialectAnswer } from '../dialects/index.js';
import { ErrorCodes, RpcError } from '../rpc/index.js';
import { ResultType, UnsubscribeEventsParamsSchema } from '../protocol/index.js';
import type { EventCatalog } from './EventCatalog.js';
import { parse } from './parseEventParams.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';
import { webhookRefusal } from './webhookRefusal.js';

/** spec V108 V109: `events/unsubscribe` of a task-scoped type, by the same key, the principal from auth. */
export async function unsubscribeTaskEvents(
  catalog: EventCatalog,
  webhooks: WebhookDeliveries | undefined,
  params: Record<string, unknown>,
  caller: Caller,
): Promise<DialectAnswer> {
  const parsed = parse(UnsubscribeEventsParamsSchema, params);
  if (!catalog.has(parsed.name))
    throw new RpcError(ErrorCodes.EVENTS_NOT_FOUND, `Unknown event type: ${parsed.name}`, { kind: 'event' });
  if (!webhooks)
    throw new RpcError(ErrorCodes.EVENTS_UNSUPPORTED, `Event type ${parsed.name} does not offer webhook delivery`, {
      feature: 'deliveryMode',
      value: 'webhook',
    });
  const taskId = catalog.taskOf(parsed.arguments);
  await webhookRefusal(() =>
    webhooks.unsubscribe({
      owner: caller.authenticated ? caller.owner : undefined,
      name: parsed.name,
      arguments: { taskId },
      url: parsed.delivery.url,
    }),
  );
  return { result: { resultType: ResultType.complete } };
}
