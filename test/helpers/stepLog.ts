import { readFileSync } from 'node:fs';

/** What the fixture's workflow step closures logged to `log` (MCP_TASKS_STEP_LOG) for `taskId`, in order. */
export function logged(log: string, taskId: string): string[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${taskId} `))
    .map((line) => line.slice(taskId.length + 1));
}
