import type { TaskRecord } from '../../engine/index.js';
import { isObject } from '../../rpc/index.js';
import type { DialectContext, ToolTaskPolicy } from './DialectContext.js';

/**
 * State of a multi-round-trip tool between runs, kept on the task: the request state the tool returned, which task
 * input key stands for which of the tool's own keys, and (first run only) answers that came with the original request.
 */
export interface MultiRoundTripState {
  requestState?: string;
  keys?: Record<string, string>;
  responses?: Record<string, unknown>;
}

/**
 * What the server keeps on a task it created, for whoever runs or follows it later, in any process: the record's
 * `meta` holds it under these keys (stored as written, so the keys never change). Written once per dialect, at
 * creation (`taskMetaFor`), and by a multi-round-trip run as it suspends (`multiRoundTripMeta`); read only through
 * `readTaskMeta`. The engine reads none of it. Other keys of `meta` belong to one owner each: the engine's trace
 * context (`traceContext`), the workflow's parked questions (`workflowInputs`), the proxy's upstream task
 * (`upstreamTask`) and SEP-1686's question carrier (`sepQuestionsCarriedUntil`).
 */
export interface ServerTaskMeta {
  /** The connection that created the task: its progress and status pushes go there while it is open. */
  connectionId?: string;
  /** The tool called, for a `tools/call` task. */
  toolName?: string;
  /** The requestor's declared capabilities, mirrored to the tool's internal call. */
  clientCapabilities: Record<string, unknown>;
  /** How the tool asks for input (the tool's policy when the task was created). */
  inputStyle: 'requests' | 'multiRoundTrip';
  /** A multi-round-trip tool's state between runs (stored as `mrtr`). */
  multiRoundTrip?: MultiRoundTripState;
}

/** The stored spelling of each field. */
const KEY = {
  connectionId: 'connectionId',
  toolName: 'toolName',
  clientCapabilities: 'clientCapabilities',
  inputStyle: 'inputStyle',
  multiRoundTrip: 'mrtr',
} as const satisfies Record<keyof ServerTaskMeta, string>;

/** The server's meta of a task; defaults for a task created without it (by the engine's API directly). */
export function readTaskMeta(record: Pick<TaskRecord, 'meta'>): ServerTaskMeta {
  const meta = record.meta;
  const connectionId = meta[KEY.connectionId];
  const toolName = meta[KEY.toolName];
  const capabilities = meta[KEY.clientCapabilities];
  const state = meta[KEY.multiRoundTrip];
  return {
    ...(typeof connectionId === 'string' && { connectionId }),
    ...(typeof toolName === 'string' && { toolName }),
    clientCapabilities: isObject(capabilities) ? capabilities : {},
    inputStyle: meta[KEY.inputStyle] === 'multiRoundTrip' ? 'multiRoundTrip' : 'requests',
    ...(isObject(state) && { multiRoundTrip: state as MultiRoundTripState }),
  };
}

/** The meta a dialect stores on a task it creates for `ctx`'s connection (`toolName` for a `tools/call`). */
export function taskMetaFor(
  ctx: Pick<DialectContext, 'connectionId'>,
  fields: {
    toolName: string | undefined;
    clientCapabilities: Record<string, unknown> | undefined;
    policy: ToolTaskPolicy | undefined;
    multiRoundTrip?: MultiRoundTripState | undefined;
  },
): Record<string, unknown> {
  return {
    [KEY.connectionId]: ctx.connectionId,
    ...(fields.toolName !== undefined && { [KEY.toolName]: fields.toolName }),
    [KEY.clientCapabilities]: fields.clientCapabilities ?? {},
    [KEY.inputStyle]: fields.policy?.inputStyle ?? 'requests',
    ...(fields.multiRoundTrip && multiRoundTripMeta(fields.multiRoundTrip)),
  };
}

/** The meta a multi-round-trip run stores as it suspends: its state for the next run (replacing the previous one). */
export function multiRoundTripMeta(state: MultiRoundTripState): Record<string, unknown> {
  return { [KEY.multiRoundTrip]: state };
}
