export type { CallToolResult, Tool } from '@modelcontextprotocol/client';
export { ClientTaskHost, type ClientTaskHostOptions } from './ClientTaskHost.js';
export { DIALECT_NAMES, isDialectPreference, type DialectName, type DialectPreference } from './DialectName.js';
export type { CallMode, CancelAck } from './dialects/TaskDialect.js';
export {
  DEFAULT_MAX_HANDLES,
  HandleStore,
  type HandleStoreOptions,
  type StoredHandle,
  type StoredSession,
} from './HandleStore.js';
export type { FollowOptions, TaskEvent } from './EventSourceFollower.js';
export {
  EventsClient,
  type EventTypePage,
  type PolledEvents,
  type PollOptions,
  type WebhookGrant,
  type WebhookOptions,
} from './EventsClient.js';
export type { HandlePhase } from './HandlePhase.js';
export {
  type ElicitationHandler,
  type ElicitationParams,
  type InputContext,
  type InputHandlers,
  type SamplingHandler,
  type SamplingParams,
} from './InputRouter.js';
export { DEFAULT_POLL_POLICY, PollSchedule, type PollPolicy } from './PollSchedule.js';
export { TaskClient, type CallToolOptions, type TaskClientOptions, type TaskList } from './TaskClient.js';
export {
  TaskCancelledError,
  TaskClientError,
  TaskConnectionError,
  TaskFailedError,
  TaskInputError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
  type RpcErrorObject,
} from './TaskClientError.js';
export { TaskHandle } from './TaskHandle.js';
export { outcomeError, textOf, type TaskOutcome, type TaskPayload } from './TaskOutcome.js';
export { sameVisibleState, type TaskProgress, type TaskSnapshot } from './TaskSnapshot.js';
export { isTerminalStatus, TASK_STATUSES, type TaskStatus, type TerminalTaskStatus } from './TaskStatus.js';
export {
  describeTarget,
  isHttpTarget,
  targetKey,
  type HttpTarget,
  type StdioTarget,
  type TargetDescriptor,
  type TaskTarget,
} from './TaskTarget.js';
