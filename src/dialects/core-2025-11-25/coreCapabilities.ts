/** The server `capabilities.tasks` of 2025-11-25 (spec R1). `list` only where callers can be told apart (R66). */
export function coreCapabilities(listable: boolean): Record<string, unknown> {
  return {
    ...(listable && { list: {} }),
    cancel: {},
    requests: { tools: { call: {} } },
  };
}

/** Adds `execution.taskSupport` to each listed tool that has a task policy (spec §1.3). */
export function withTaskSupport(
  result: Record<string, unknown>,
  supportOf: (toolName: string) => string | undefined,
): Record<string, unknown> {
  const tools = result['tools'];
  if (!Array.isArray(tools)) return result;
  return {
    ...result,
    tools: tools.map((tool: unknown) => {
      if (!tool || typeof tool !== 'object') return tool;
      const named = tool as { name?: unknown; execution?: Record<string, unknown> };
      const support = typeof named.name === 'string' ? supportOf(named.name) : undefined;
      if (support === undefined) return tool;
      return { ...named, execution: { ...named.execution, taskSupport: support } };
    }),
  };
}
