import type { EngineHandle, TaskWorkContext } from '../contracts/Executor.js';
import type { ReportedStatus, TaskRecord } from '../record/TaskRecord.js';
import type { ReportingRun, RunStatusWrites } from './RunStatusWrites.js';

/** What of a run its work's context keeps up to date. */
export interface ContextRun extends ReportingRun {
  /** What the work started still runs after the work returned on its abort (TaskWorkContext.endsLater). */
  endsLater?: Promise<unknown>;
}

/** The context a claimed run's work gets: its reports go through `writes`, its questions to the engine. */
export function runContext(
  engine: EngineHandle,
  task: TaskRecord,
  signal: AbortSignal,
  run: ContextRun,
  writes: RunStatusWrites,
): TaskWorkContext {
  const { taskId } = task;
  // Every report is remembered as the run's latest: its own write may land after the outcome's, and be refused.
  const settleStatus = (reported: ReportedStatus) => {
    // A report without a message keeps the last message (as the throttle does): the message stays current.
    run.reported = { ...run.reported, ...reported };
  };
  return {
    task,
    signal,
    setStatusMessage: (message) => {
      settleStatus({ message });
      return writes.message(message);
    },
    // Stored wherever the work runs: tasks/get carries it on every generation (and a relay reads it, spec R55).
    reportProgress: (update) => {
      settleStatus({ progress: update, ...(update.message !== undefined && { message: update.message }) });
      return writes.progress(update);
    },
    settleStatus,
    endsLater: (ended) => {
      run.endsLater = ended;
    },
    requestInput: async (request) => {
      // A held report lands before the question.
      await writes.flush();
      return engine.askForInput(taskId, request, task.attempts, signal);
    },
    suspend: async (requests, meta) => {
      await writes.flush();
      return engine.suspend(taskId, requests, meta, task.attempts);
    },
  };
}
