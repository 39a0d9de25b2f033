import { SUSPENDED, type TaskOutcome, type TaskSuspension, type TaskWork } from '../engine/index.js';
import { MAX_STEPS_PER_TASK } from './JournaledStep.js';
import { WorkflowRun, type WorkflowEngine } from './WorkflowRun.js';

/**
 * Gives the tools a task runs the journaled step API: each run's work executes `within` its `WorkflowRun`, where the
 * tool's handler finds it (`withSteps`, `emitTaskEvent`), and a run that suspended (sleep, question, retry wait) parks
 * the task instead of completing it. `maxSteps` bounds each task's journal (smaller in tests).
 */
export function journaledWork(engine: WorkflowEngine, work: TaskWork, maxSteps = MAX_STEPS_PER_TASK): TaskWork {
  if (!engine.store.journal) return work;
  return async (context): Promise<TaskOutcome | TaskSuspension> => {
    const run = new WorkflowRun(engine, context, maxSteps);
    const outcome = await run.within(() => work(context));
    if (run.superseded) return SUSPENDED;
    if (run.suspension && !context.signal.aborted) {
      await run.park();
      return SUSPENDED;
    }
    return outcome;
  };
}
