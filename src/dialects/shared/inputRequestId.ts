/**
 * Ids of the requests a task sends to its requestor encode the task and the input key, so whichever connection or
 * server instance receives the answer can route it to the task without shared memory.
 */
const PREFIX = 'mcp-tasks-input:';

export function inputRequestId(taskId: string, key: string): string {
  return `${PREFIX}${taskId}:${key}`;
}

export function parseInputRequestId(id: unknown): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
  const rest = id.slice(PREFIX.length);
  const colon = rest.lastIndexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { taskId: rest.slice(0, colon), key: rest.slice(colon + 1) };
}
