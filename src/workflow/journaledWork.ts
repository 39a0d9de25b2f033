import { SUSPENDED, type TaskOutcome, type TaskSuspension, type TaskWork } from '../engine/index.js';
import { MAX_STEPS_PER_TASK } from './JournaledStep.js';
import { WorkflowRun, type WorkflowEngine } from './WorkflowRun.js';

/** `_meta` key of the internal request that lets a workflow tool find its run. */
export const WORKFLOW_RUN_META = 'dev.mcp-tasks/workflow-run';

/**
 * Gives the tools a task runs the journaled step API: each run is registered under a fresh token passed in the
 * request's `_meta`, and a run that suspended (sleep, question, retry wait) parks the task instead of completing it.
 * Tools that never call a step pay for one map entry. `maxSteps` bounds each task's journal (smaller in tests).
 */
export function journaledWork(engine: WorkflowEngine, work: TaskWork, maxSteps = MAX_STEPS_PER_TASK): TaskWork {
  if (!engine.store.journal) return work;
  return async (context): Promise<TaskOutcome | TaskSuspension> => {
    const run = new WorkflowRun(engine, context, maxSteps);
    try {
      const request = context.task.request;
      const meta = typeof request.params['_meta'] === 'object' ? (request.params['_meta'] as object) : {};
      const params = { ...request.params, _meta: { ...meta, [WORKFLOW_RUN_META]: run.token } };
      const outcome = await work({ ...context, task: { ...context.task, request: { ...request, params } } });
      if (run.superseded) return SUSPENDED;
      if (run.suspension && !context.signal.aborted) {
        await run.park();
        return SUSPENDED;
      }
      return outcome;
    } finally {
      run.close();
    }
  };
}
