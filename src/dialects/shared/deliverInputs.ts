import type { PendingInput, TaskRecord } from '../../engine/index.js';
import { isObject } from '../../rpc/index.js';
import type { DialectContext } from './DialectContext.js';
import { inputRequestId } from './inputRequestId.js';

/**
 * Sends the task's outstanding input requests to the requestor on the current request's stream, each once per
 * connection while it is in flight, carrying the task it belongs to under `relatedTaskKey` (the generations spell the
 * key differently). Records what it sent in `delivered`, for the caller to release when its request ends. Standing
 * offers not answered yet go the same way while the task is `working`: the response answers the offer. `only`, when
 * given, limits what is sent to those keys.
 */
export async function deliverInputs(
  record: TaskRecord,
  ctx: DialectContext,
  delivered: string[],
  relatedTaskKey: string,
  relatedTaskId = record.taskId,
  only?: ReadonlySet<string>,
): Promise<void> {
  for (const [key, pending] of outstandingInputs(record)) {
    const entry = `${record.taskId}:${key}`;
    if (ctx.inFlightInputs.has(entry) || (only && !only.has(key))) continue;
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

/**
 * What a requestor may still answer: the outstanding input requests, and the offers not answered yet while the task is
 * `working` (a question or the end comes first).
 */
export function outstandingInputs(record: TaskRecord): Array<[string, PendingInput]> {
  const open: Array<[string, PendingInput]> = Object.entries(record.inputRequests);
  if (record.status === 'working') {
    for (const [key, offer] of Object.entries(record.offers ?? {})) if (!offer.answered) open.push([key, offer]);
  }
  return open;
}
