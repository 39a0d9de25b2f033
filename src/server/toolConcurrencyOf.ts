import type { ToolTaskPolicy } from '../dialects/index.js';

/** The per-tool concurrency limits named in tool policies; a limit that is not a positive integer is refused. */
export function toolConcurrencyOf(
  tools: Record<string, ToolTaskPolicy['taskSupport'] | ToolTaskPolicy>,
): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const [name, policy] of Object.entries(tools)) {
    if (typeof policy !== 'object' || policy.concurrency === undefined) continue;
    if (!Number.isInteger(policy.concurrency) || policy.concurrency < 1)
      throw new Error(`Tool policy of "${name}": concurrency must be a positive integer, got ${policy.concurrency}`);
    limits[name] = policy.concurrency;
  }
  return limits;
}
