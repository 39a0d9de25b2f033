import { ErrorCodes, RpcError } from '../rpc/index.js';

/** Params per the wire's schema; anything else is -32602 naming the first problem (spec V40). */
export function parse<T>(
  schema: {
    safeParse(
      value: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
  },
  params: Record<string, unknown>,
): T {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  throw new RpcError(ErrorCodes.INVALID_PARAMS, `Invalid params: ${where}${issue?.message ?? 'invalid'}`);
}
