// `mcp-tasks/engine`: the contracts for writing a store or an executor — the record a store keeps, the store and
// event-bus interfaces, the executor interface and the work it runs, and the typed errors both may raise. The engine
// itself (TaskEngine) is reached through the runtime; its type is here for `executor`/`work` options.
// test/stores/storeContract.ts is the behaviour a store must show.

// What a store keeps.
export type {
  InputAnswer,
  JsonRpcErrorObject,
  PendingInput,
  ProgressUpdate,
  RecoveryMark,
  ReportedStatus,
  RetentionPolicy,
  RetentionRequest,
  StandingOffer,
  StoredProgress,
  TaskRecord,
  TaskRequest,
} from '../engine/index.js';
export {
  canTransition,
  isTaskStatus,
  isTerminal,
  TASK_STATUSES,
  type TaskStatus,
  type TerminalStatus,
} from '../engine/index.js';

// The store contract.
export type {
  InsertAlong,
  InsertResult,
  ListPosition,
  OwnerLimitKind,
  OwnerLimits,
  ReplaceAlong,
  TaskStore,
  TimelineAppend,
} from '../engine/index.js';
export { ANY_OWNER, type OwnerPrincipal, type OwnerScope } from '../engine/index.js';
export { LocalEventBus, type TaskChange, type TaskEventBus, type TaskEventListener } from '../engine/index.js';
export type { SerializedError, StepJournalStore, StepKind, StepRow, WakeEntry } from '../engine/index.js';
// Optional store capabilities: a task's timeline, reads across owners for operators, each task's event log, the
// durable untasked event types' logs, webhook subscriptions and their delivery outbox.
export type { TaskTimelineStore, TimelineEntry, TimelineKind } from '../engine/index.js';
export type { BrowseFilter, BrowsePosition, TaskBrowseStore } from '../engine/index.js';
export { eventLogTopic, type EventAppendResult, type LoggedEvent, type NewLoggedEvent } from '../engine/index.js';
export type { TaskEventLog } from '../engine/index.js';
export { eventStreamTopic, type EventStreamLog, type NewStreamedEvent, type StreamedEvent } from '../engine/index.js';
export { initialWebhookStatus, type WebhookOutboxStore, type WebhookSubscriptionStatus } from '../engine/index.js';
export type {
  OutboxEntry,
  OutboxRow,
  OutboxSettlement,
  StoredWebhookSubscription,
  WebhookSubscriptionRecord,
} from '../engine/index.js';

// The executor contract.
export type {
  EngineHandle,
  Executor,
  ExecutorLoad,
  QueueStats,
  RunReservation,
  SubmitContext,
  TaskOutcome,
  TaskSuspension,
  TaskWork,
  TaskWorkContext,
} from '../engine/index.js';
export { SUSPENDED, toolOf, type ToolConcurrency } from '../engine/index.js';
// The run path every executor takes: claim, lease, run the work, settle, abort a run taken over.
export {
  TaskRunAbortedError,
  TaskRunner,
  type TaskWatch,
  type RunEnd,
  type TaskRunnerOptions,
} from '../engine/index.js';
export type { Clock, EngineLogger, TaskEngine } from '../engine/index.js';
export { systemClock } from '../engine/index.js';

// The engine's settings and what its methods take and give (the runtime's `engine`, `limits` and `logger` options).
export type {
  CreateTaskInput,
  EngineLimits,
  ListResult,
  ParkOptions,
  TaskEngineOptions,
  TaskLifecycleEvent,
} from '../engine/index.js';
// A task's events as its work emits them, checked and announced.
export type { EmittedEvent, EventAppendedListener, EventCheck } from '../engine/index.js';
export { TASK_STATUS_EVENT } from '../engine/index.js';
// The runtime's `events` option (docs/events.md).
export {
  EventCatalog,
  type EventAccessRequest,
  type EventAuthorizer,
  type EventsOptions,
  type EventTypeOptions,
} from '../events/index.js';
export type { DeliveryMode, EventDescriptor } from '../protocol/index.js';
// What the `events.webhooks` option plugs in (docs/webhooks.md).
export type {
  DeliveryStatus,
  TerminationError,
  WebhookDeliveries,
  WebhookEvent,
  WebhookFailure,
  WebhookKey,
  WebhookOccurrence,
  WebhookSubscribeInput,
  WebhookSubscribeResult,
  WebhookSubscriptionView,
} from '../events/webhooks/index.js';
// The webhook deliveries the runtime ships: the store's durable outbox, signed, verified and SSRF-guarded.
export {
  CallbackPolicy,
  DEFAULT_WEBHOOK_LIMITS,
  OutboxWebhookDeliveries,
  type CallbackPolicyOptions,
  type OutboxWebhookDeliveriesOptions,
  type WebhookAttempt,
  type WebhookDeliveryOutcome,
  type WebhookLimits,
} from '../events/webhooks/index.js';
export { defaultRecoveryPolicy, type RecoveryDecision, type RecoveryPolicy } from '../engine/index.js';

// Errors a store or an executor raises (those of mcp-tasks/errors, and the fencing one a store raises); the runtime
// maps each to its JSON-RPC error.
export * from './errors.js';
export { redactUrl, StaleLeaseError } from '../engine/index.js';
