import { readFileSync } from 'node:fs';

/** The lines of the fixture's step log (MCP_TASKS_STEP_LOG): `<taskId> <step>` each; none before the first. */
function lines(log: string): string[] {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** What the fixture's workflow step closures logged to `log` (MCP_TASKS_STEP_LOG) for `taskId`, in order. */
export function logged(log: string, taskId: string): string[] {
  return lines(log)
    .filter((line) => line.startsWith(`${taskId} `))
    .map((line) => line.slice(taskId.length + 1));
}

/** The task ids that appear in the step log `log`, in order of their first line. */
export function loggedTasks(log: string): string[] {
  return [...new Set(lines(log).map((line) => line.slice(0, line.indexOf(' '))))];
}
