import type { CallToolResult } from '@modelcontextprotocol/client';

import { TaskCancelledError, TaskFailedError, type RpcErrorObject } from './TaskClientError.js';
import type { TaskSnapshot } from './TaskSnapshot.js';

/** What the underlying request produced: its result, or the JSON-RPC error it would have returned (spec R33, R35). */
export type TaskPayload = { kind: 'result'; result: CallToolResult } | { kind: 'error'; error: RpcErrorObject };

/** How a task (or a plain call) ended, as the server last described it. */
export type TaskOutcome =
  | { status: 'completed'; snapshot: TaskSnapshot; result: CallToolResult }
  | { status: 'failed'; snapshot: TaskSnapshot; message: string; error?: RpcErrorObject; result?: CallToolResult }
  | { status: 'cancelled'; snapshot: TaskSnapshot; message?: string };

/** The text blocks of a tool result, joined; the closest thing a tool result has to an error message. */
export function textOf(result: CallToolResult): string {
  const content: unknown[] = Array.isArray(result.content) ? result.content : [];
  return content
    .map((block) =>
      typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text'
        ? String((block as { text?: unknown }).text ?? '')
        : '',
    )
    .filter((text) => text.length > 0)
    .join('\n');
}

/**
 * Combines the server's final status with the payload. A tool result with `isError: true` is a failure in every
 * dialect: 2025-11-25 marks such a task `failed` (spec R62), while the extension (spec E15) and SEP-1686 mark it
 * `completed`; the host sees one rule either way, and `snapshot.status` keeps the server's own word.
 */
export function outcomeOf(snapshot: TaskSnapshot, payload: TaskPayload | undefined): TaskOutcome {
  if (snapshot.status === 'cancelled') {
    return {
      status: 'cancelled',
      snapshot,
      ...(snapshot.statusMessage !== undefined && { message: snapshot.statusMessage }),
    };
  }
  if (payload?.kind === 'error') {
    return { status: 'failed', snapshot, message: payload.error.message, error: payload.error };
  }
  if (payload?.kind === 'result') {
    if (payload.result.isError === true || snapshot.status === 'failed') {
      const message = textOf(payload.result) || snapshot.statusMessage || 'The tool reported an error';
      return { status: 'failed', snapshot, message, result: payload.result };
    }
    return { status: 'completed', snapshot, result: payload.result };
  }
  if (snapshot.status === 'unknown') {
    return { status: 'failed', snapshot, message: snapshot.statusMessage ?? 'The server lost track of the task' };
  }
  if (snapshot.status === 'completed') return { status: 'completed', snapshot, result: { content: [] } };
  return { status: 'failed', snapshot, message: snapshot.statusMessage ?? 'The task failed without a stored result' };
}

/** The error `result()` rejects with for an outcome that is not a success. */
export function outcomeError(outcome: TaskOutcome): TaskFailedError | TaskCancelledError | undefined {
  if (outcome.status === 'completed') return undefined;
  if (outcome.status === 'cancelled') return new TaskCancelledError(outcome.snapshot);
  return new TaskFailedError(outcome.message, outcome.snapshot, outcome.error, outcome.result);
}
