import type { ToolTaskPolicy } from 'mcp-tasks';
import { FIXTURE_POLICIES } from './fixtureTools.js';

/**
 * The fixture tools' task policies, with per-tool concurrency limits from `spec` (`tool:n,tool:n`, the
 * MCP_TASKS_TOOL_CONCURRENCY setting of the fixture server and worker).
 */
export function fixturePolicies(spec: string | undefined): Record<string, ToolTaskPolicy> {
  if (!spec) return FIXTURE_POLICIES;
  const policies = { ...FIXTURE_POLICIES };
  for (const pair of spec.split(',')) {
    const [name, limit] = pair.split(':');
    const policy = name === undefined ? undefined : policies[name];
    if (!policy || !Number.isInteger(Number(limit))) throw new Error(`MCP_TASKS_TOOL_CONCURRENCY: bad entry "${pair}"`);
    policies[name as string] = { ...policy, concurrency: Number(limit) };
  }
  return policies;
}
