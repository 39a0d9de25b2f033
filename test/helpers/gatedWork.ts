import { isTerminal, type TaskEngine, type TaskWork } from '../../src/engine/index.js';

/**
 * Work for scheduling tests: tasks of the tool `quick` return at once, tasks of any other tool run until released (or
 * aborted). It records the order runs started in and the most runs of each tool at once.
 */
export function gatedWork() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const running = new Map<string, number>();
  const peak = new Map<string, number>();
  const work: TaskWork = async ({ task, signal }) => {
    const tool = task.request.params['name'] as string;
    started.push(task.taskId);
    running.set(tool, (running.get(tool) ?? 0) + 1);
    peak.set(tool, Math.max(peak.get(tool) ?? 0, running.get(tool) as number));
    try {
      if (tool !== 'quick') {
        await new Promise<void>((resolve, reject) => {
          gates.set(task.taskId, resolve);
          signal.addEventListener('abort', () => reject(signal.reason));
        });
      }
      return { kind: 'result', result: {} };
    } finally {
      running.set(tool, (running.get(tool) as number) - 1);
      gates.delete(task.taskId);
    }
  };
  const release = (taskId: string) => gates.get(taskId)?.();
  const releaseAll = () => {
    for (const gate of [...gates.values()]) gate();
  };
  return { work, started, gates, peak, release, releaseAll };
}

/** A `tools/call` request of `name`. */
export const callOf = (name: string) => ({ method: 'tools/call', params: { name } });

/** Whether every task (id → owner) is terminal. */
export async function allTerminal(engine: TaskEngine, tasks: Map<string, string>): Promise<boolean> {
  for (const [id, owner] of tasks) if (!isTerminal((await engine.get(owner, id)).status)) return false;
  return true;
}
