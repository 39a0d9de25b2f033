import type { PendingInput, TaskRecord } from '../../engine/index.js';
import { isObject } from '../../rpc/index.js';
import type { DialectContext } from './DialectContext.js';
import { inputRequestId } from './inputRequestId.js';

/**
 * Sends the task's outstanding input requests to the requestor on the current request's stream, each once per
 * connection while it is in flight, carrying the task it belongs to under `relatedTaskKey` (the generations spell the
 * key differently). Records what it sent in `delivered`, for the caller to release when its request ends. Standing
 * offers not answered yet go the same way while the task is `working`: the response answers the offer.
 */
export async function deliverInputs(
  record: TaskRecord,
  ctx: DialectContext,
  delivered: string[],
  relatedTaskKey: string,
  relatedTaskId = record.taskId,
): Promise<void> {
  for (const [key, pending] of [...Object.entries(record.inputRequests), ...openOffers(record)]) {
    const entry = `${record.taskId}:${key}`;
    if (ctx.inFlightInputs.has(entry)) continue;
    ctx.inFlightInputs.add(entry);
    delivered.push(entry);
    const params = { ...pending.params } as Record<string, unknown>;
    const meta = isObject(params['_meta']) ? params['_meta'] : {};
    params['_meta'] = { ...meta, [relatedTaskKey]: { taskId: relatedTaskId } };
    await ctx.outbound.relatedRequest({
      jsonrpc: '2.0',
      id: inputRequestId(record.taskId, key),
      method: pending.method,
      params,
    });
  }
}

/** Offers a requestor may still answer: none unless the task is `working` (a question or the end comes first). */
function openOffers(record: TaskRecord): Array<[string, PendingInput]> {
  if (record.status !== 'working') return [];
  return Object.entries(record.offers ?? {}).filter(([, offer]) => !offer.answered);
}
