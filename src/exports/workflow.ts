// `mcp-tasks/workflow`: the step API for durable tools, with the names and semantics of `@modelcontextprotocol/tasks`
// (step.do / sleep / sleepUntil / elicit / offer / checkInput / status / signal), journaled in the store
// (docs/architecture.md).

export {
  registerTask,
  withSteps,
  type ToolRegistrar,
  type WorkflowHandler,
  type WorkflowOptions,
} from '../workflow/index.js';
export type {
  ElicitOutcome,
  InputCheck,
  InputRequest,
  RetryPolicy,
  Step,
  StepAttempt,
  StepConfig,
} from '../workflow/index.js';
export {
  DuplicateStepError,
  NonRetryableError,
  StepResultError,
  StepTimeoutError,
  TaskTimeoutError,
  UnknownOfferError,
} from '../workflow/index.js';
export { parseDuration, MAX_STEP_RESULT_BYTES, MAX_STEPS_PER_TASK, DEFAULT_RETRIES } from '../workflow/index.js';
export { MAX_OFFERS_PER_TASK } from '../engine/index.js';
// Intermediate results from a plain tool handler run as a task (docs/events.md); workflows use `step.emit`.
export { emitTaskEvent, type TaskEventContext } from '../workflow/index.js';
