import type { TaskRecord } from '../../engine/index.js';
import { ErrorCodes, RpcError } from '../../rpc/index.js';
import type { DialectAnswer } from './DialectAnswer.js';
import type { DialectContext } from './DialectContext.js';

/**
 * One page of the caller's own tasks in a dialect's view: cursors are opaque (a bad one is -32602) and `nextCursor`
 * appears only when more remain (spec R45 R46 R58, SEP-1686 4.9).
 */
export async function listPage(
  params: Record<string, unknown>,
  ctx: DialectContext,
  view: (record: TaskRecord) => object,
): Promise<DialectAnswer> {
  const cursor = params['cursor'];
  if (cursor !== undefined && typeof cursor !== 'string')
    throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: cursor must be a string');
  const page = await ctx.engine.list(ctx.caller.owner, cursor === undefined ? {} : { cursor });
  return {
    result: { tasks: page.tasks.map(view), ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) },
  };
}
