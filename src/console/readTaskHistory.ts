import type { TaskRecord, TaskStore, TimelineEntry } from '../engine/index.js';

export interface TaskHistory {
  task: TaskRecord;
  timeline: TimelineEntry[];
}

/**
 * A task and its timeline read straight from a store, whoever owns it (an operator's read: whoever can open the
 * store sees every task). Undefined for an unknown task.
 */
export async function readTaskHistory(store: TaskStore, taskId: string): Promise<TaskHistory | undefined> {
  await store.init();
  await store.timeline?.init();
  const task = await store.get(taskId);
  if (!task) return undefined;
  return { task, timeline: (await store.timeline?.read(taskId)) ?? [] };
}
