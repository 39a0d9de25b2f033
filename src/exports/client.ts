// `mcp-tasks/client`: the requestor side — run tools as tasks against any MCP server (every generation, or none),
// follow them with handles, answer their questions, and keep handles across a host restart (docs/client.md).

export type { CallToolResult, Tool } from '../client/index.js';
export { TaskClient, type CallToolOptions, type TaskClientOptions, type TaskList } from '../client/index.js';
export { TaskHandle, type CancelAck, type HandlePhase, type TaskProgress, type TaskSnapshot } from '../client/index.js';
// A remote task's status and outcome as its server reports them (any generation), named apart from the engine's
// stored TaskStatus and TaskOutcome (mcp-tasks/engine).
export { outcomeError, textOf, type TaskOutcome as RemoteTaskOutcome, type TaskPayload } from '../client/index.js';
export {
  isTerminalStatus,
  TASK_STATUSES as REMOTE_TASK_STATUSES,
  type TaskStatus as RemoteTaskStatus,
  type TerminalTaskStatus,
} from '../client/index.js';
// A task's intermediate results (Task Event Sources, docs/events.md): `handle.events()`, `client.followEvents()`.
export type { FollowOptions, TaskEvent } from '../client/index.js';
export type { EventSource } from '../protocol/index.js';
// Any event type, by the Events extension's requests (`client.events()`): list, poll, stream, webhook subscriptions.
export type {
  EventsClient,
  EventTypePage,
  PolledEvents,
  PollOptions,
  WebhookGrant,
  WebhookOptions,
} from '../client/index.js';
export type { EventDescriptor } from '../protocol/index.js';
export { HandleStore, type HandleStoreOptions, type StoredHandle, type StoredSession } from '../client/index.js';
export type { CallMode, DialectName, DialectPreference } from '../client/index.js';
// The three wire generations of tasks, as a dialect preference names them.
export { TASK_GENERATIONS, type TaskGeneration } from '../protocol/index.js';
export { DEFAULT_POLL_POLICY, type PollPolicy } from '../client/index.js';
export type { HttpTarget, StdioTarget, TargetDescriptor, TaskTarget } from '../client/index.js';
export type {
  ElicitationHandler,
  ElicitationParams,
  InputContext,
  InputHandlers,
  SamplingHandler,
  SamplingParams,
} from '../client/index.js';

// Every error extends TaskClientError with a stable `kind`.
export {
  TaskCancelledError,
  TaskClientError,
  TaskConnectionError,
  TaskFailedError,
  TaskInputError,
  // The server does not know the task (the engine's TaskNotFoundError is the store's).
  TaskNotFoundError as RemoteTaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
  type RpcErrorObject,
} from '../client/index.js';

// A host receiving Events webhooks checks each delivery with its subscription's secret (docs/webhooks.md).
export {
  generateWebhookSecret,
  verifyWebhook,
  WebhookVerificationError,
  type VerifiedWebhook,
  type VerifyWebhookOptions,
  type WebhookHeaderSource,
} from '../events/webhooks/index.js';
