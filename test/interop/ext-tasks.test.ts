import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  TaskCancelledError,
  TaskFailedError,
  type ApplicationElicitResult,
  type ApplicationInputRequest,
  type ResolvedInputExchangeContext,
  type TaskEnabledSession,
  type TaskExecutionEvent,
  type TaskOutcome,
  type TaskView,
  type ToolExecution,
} from '@modelcontextprotocol/ext-tasks/client';
import type { TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { HttpFixture } from '../helpers/rawWire.js';
import { fetchRawDispatch, type RawExchange } from './helpers/fetchRawDispatch.js';

/**
 * The official requestor, `@modelcontextprotocol/ext-tasks@0.2.2`, on the official SDK v2 client
 * (`@modelcontextprotocol/client@2.4.0`), against our fixture server's one HTTP endpoint in both wire generations:
 * 2025-11-25 core tasks ("v1": initialize, `params.task`, `tasks/get|result|list|cancel`) and the 2026-07-28 tasks
 * extension ("v2": `server/discover`, `resultType: "task"`, `tasks/get` with inlined outcomes, `tasks/update`).
 */

const CLIENT_INFO = { name: 'ext-tasks-interop', version: '1.0.0' };
const CLIENT_CAPABILITIES = { elicitation: { form: {} } };
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

type ToolResult = {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  resultType?: string;
  _meta?: Record<string, unknown>;
};
type Settled = {
  execution: ToolExecution<ToolResult>;
  outcome: TaskOutcome<ToolResult>;
  /** The statuses the execution reported, in order. */
  statuses: string[];
  lastTask: TaskView | undefined;
};
type SeenInput = { request: ApplicationInputRequest; context: ResolvedInputExchangeContext };

/** What the "user" answers: confirm deletions of `yes-*` files, give the name Ada, go ahead with imports. */
function answer(params: Readonly<Record<string, unknown>>): ApplicationElicitResult {
  const message = String(params['message']);
  if (message.startsWith('Delete ')) return { action: 'accept', content: { confirm: message.includes('yes-') } };
  if (message.includes('name')) return { action: 'accept', content: { name: 'Ada' } };
  if (message.startsWith('Proceed')) return { action: 'accept', content: { confirm: true } };
  return { action: 'decline' };
}

/** The application side of ext-tasks' input routing: records every request it is handed, then answers it. */
function inputHandler(seen: SeenInput[]) {
  return createApplicationInputHandler({
    elicitation: async (request, context) => {
      seen.push({ request, context });
      return answer(request.params);
    },
    sampling: async () => {
      throw new Error('the fixture tools used here never sample');
    },
    roots: async () => ({ roots: [] }),
  });
}

/** Settles an execution, recording its status events; `onTask` sees each task event as it arrives. */
async function settle(
  execution: ToolExecution<ToolResult>,
  onTask?: (task: TaskView) => void,
  timeoutMs = 20_000,
): Promise<Settled> {
  const statuses: string[] = [];
  const { outcome, lastTask } = await execution.settle({
    signal: AbortSignal.timeout(timeoutMs),
    onEvent: (event: TaskExecutionEvent<ToolResult>) => {
      if (event.type !== 'task') return;
      statuses.push(event.task.status);
      onTask?.(event.task);
    },
  });
  return { execution, outcome, statuses, lastTask };
}

/** The result of a completed outcome; any other outcome fails the test with ext-tasks' own explanation. */
function completed(outcome: TaskOutcome<ToolResult>): ToolResult {
  if (outcome.status === 'completed') return outcome.result;
  const causes: string[] = [];
  for (let error: unknown = outcome.status === 'failed' ? outcome.error : undefined; error;) {
    causes.push(error instanceof Error ? error.message : JSON.stringify(error));
    error = error instanceof Error ? error.cause : undefined;
  }
  throw new Error(`expected a completed outcome, got ${outcome.status}: ${causes.join(' <- ')}`);
}

const text = (result: ToolResult): string | undefined => result.content[0]?.text;

describe('interop: ext-tasks 0.2.2 on the SDK v2 client, 2025-11-25 core tasks', () => {
  let fixture: HttpFixture;
  let client: Client;
  let session: TaskEnabledSession;
  const inputs: SeenInput[] = [];
  const backgroundErrors: Error[] = [];

  beforeAll(async () => {
    fixture = await HttpFixture.start();
    // versionNegotiation defaults to 'legacy': the plain initialize handshake.
    client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES });
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
    session = createTaskSessionFromClient(client, {
      endpointId: 'fixture-2025-11-25',
      onInputRequest: inputHandler(inputs),
      onError: (error) => backgroundErrors.push(error),
    });
  });
  afterAll(async () => {
    await session?.close();
    await client?.close();
    await fixture?.close();
  });

  /** Calls a tool through the session, as a task when the tool allows one. */
  const call = (name: string, args: Record<string, string | number> = {}) =>
    session.callTool<ToolResult>(name, args, { task: { preference: 'prefer' } });

  /**
   * ext-tasks 0.2.2 only polls `tasks/get` while a v1 task is `input_required` and never calls `tasks/result` before
   * the task is terminal (spec §1.10 step 3 / R25 is a requestor SHOULD it skips), so it can only see the task's
   * `elicitation/create` if the server pushes it on a stream it already has open. Our server delivers it on the
   * `tasks/result` stream (§1.10 step 4), so the host makes that call itself, through the same SDK client: the
   * elicitation then reaches the client, whose fallback handler (installed by ext-tasks) routes it by its
   * related-task `_meta` to the session's `onInputRequest`.
   */
  function fetchInputsOnInputRequired(pending: Array<Promise<unknown>>) {
    const asked = new Set<string>();
    return (task: TaskView) => {
      if (task.status !== 'input_required' || asked.has(task.taskId)) return;
      asked.add(task.taskId);
      pending.push(
        client
          .request({ method: 'tasks/result', params: { taskId: task.taskId } }, z.looseObject({}))
          .catch((error: unknown) => error),
      );
    };
  }

  it('negotiates the 2025-11-25 generation from initialize', () => {
    expect(client.getProtocolEra()).toBe('legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(session.capabilities).toEqual({
      inventory: 'server-list',
      execution: true,
      cancellation: true,
      inputResponses: false,
      requestedRetention: true,
    });
  });

  it('calls a tool without task support directly', async () => {
    const execution = await session.callTool<ToolResult>('greet', { name: 'Ada' });
    expect(execution.kind).toBe('immediate');
    const { outcome } = await execution.settle();
    expect(text(completed(outcome))).toBe('Hello, Ada!');
  });

  it('runs a task-required tool as a task to completion', async () => {
    // No preference: ext-tasks reads execution.taskSupport "required" from tools/list on its own.
    const execution = await session.callTool<ToolResult>('generate_report', { pages: 2 });
    expect(execution.kind).toBe('task');
    const { outcome, statuses, lastTask } = await settle(execution);
    const result = completed(outcome);
    expect(result.content).toEqual([{ type: 'text', text: 'Report ready: 2 pages' }]);
    expect(result.isError).toBeFalsy();
    // spec R36: the tasks/result payload names the task it came from.
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: execution.handle?.taskId });
    expect(statuses[0]).toBe('working');
    expect(statuses.at(-1)).toBe('completed');
    expect(lastTask).toMatchObject({ taskId: execution.handle?.taskId, status: 'completed', ttl: expect.any(Number) });
    expect(resultFromTaskOutcome(outcome)).toBe(result);
  });

  it('reports a tool error (isError) as a failed task with the tool’s text', async () => {
    const execution = await session.callTool<ToolResult>('failing_job', {});
    expect(execution.kind).toBe('task');
    const { outcome, statuses } = await settle(execution);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    // spec R62: isError ends the task `failed`; ext-tasks surfaces the task's statusMessage (R61).
    expect(outcome.error).toBeInstanceOf(TaskFailedError);
    expect(outcome.error.message).toContain('The job failed: the input data is corrupt.');
    expect(outcome.task).toMatchObject({ status: 'failed', statusMessage: outcome.error.message });
    expect(statuses.at(-1)).toBe('failed');
    expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskFailedError);
  });

  it('reports a JSON-RPC error as a failed task; tasks/result returns that same error', async () => {
    const execution = await call('protocol_error_job');
    expect(execution.kind).toBe('task');
    const { outcome } = await settle(execution);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error.message).toContain('protocol_error_job: the upstream service refused the request');
    expect(outcome.error.message).toContain('-32603');
    // ext-tasks does not fetch the payload of a failed v1 task; the same SDK client can (spec R33, R35).
    const payload = await client
      .request({ method: 'tasks/result', params: { taskId: execution.handle?.taskId } }, z.looseObject({}))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(payload).toBeInstanceOf(ProtocolError);
    expect(payload).toMatchObject({
      code: -32603,
      message: expect.stringContaining('protocol_error_job: the upstream service refused the request'),
      data: { upstream: 'inventory', retryable: false },
    });
  });

  it('cancels a running task', async () => {
    const execution = await session.callTool<ToolResult>(
      'slow_compute',
      { seconds: 30, label: 'stop' },
      { task: { preference: 'require', retentionMs: 60_000 } },
    );
    expect(execution.kind).toBe('task');
    const taskId = execution.handle?.taskId as TaskId;
    await execution.cancel();
    const { outcome } = await settle(execution);
    expect(outcome.status).toBe('cancelled');
    expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskCancelledError);
    // spec R50: cancelled before the response; it stays cancelled (R51).
    const snapshot = await session.task(taskId).snapshot();
    expect(snapshot).toMatchObject({ taskId, status: 'cancelled' });
    expect(snapshot.statusMessage).toMatch(/cancel/i);
  });

  it('answers an elicitation through the session’s input routing', async () => {
    const before = inputs.length;
    const pending: Array<Promise<unknown>> = [];
    const execution = await call('confirm_delete', { filename: 'yes-please.txt' });
    expect(execution.kind).toBe('task');
    const { outcome, statuses } = await settle(execution, fetchInputsOnInputRequired(pending));
    await Promise.all(pending);

    expect(text(completed(outcome))).toBe('Deleted yes-please.txt');
    expect(statuses).toContain('input_required');
    expect(statuses.at(-1)).toBe('completed');
    const seen = inputs.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.request).toMatchObject({
      kind: 'elicitation',
      params: {
        message: 'Delete yes-please.txt?',
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
        // spec R24 R38: the elicitation names the task that needs it; that is how ext-tasks routed it.
        _meta: { [RELATED_TASK]: { taskId: execution.handle?.taskId } },
      },
    });
    expect(seen[0]?.context).toMatchObject({
      scope: 'task',
      delivery: 'peer-request',
      taskId: execution.handle?.taskId,
    });
  });

  it('answers two elicitations of one task', async () => {
    const before = inputs.length;
    const pending: Array<Promise<unknown>> = [];
    const execution = await call('multi_input');
    const { outcome } = await settle(execution, fetchInputsOnInputRequired(pending));
    await Promise.all(pending);

    expect(text(completed(outcome))).toBe('name="Ada" confirm=true');
    const seen = inputs.slice(before);
    expect(seen.map((input) => input.request.params?.['message']).sort()).toEqual([
      'Proceed with the import?',
      'Your name?',
    ]);
    for (const input of seen) expect(input.context).toMatchObject({ scope: 'task', taskId: execution.handle?.taskId });
  });

  it('lists the tasks it created (server-list inventory)', async () => {
    const { tasks } = await session.listTasks();
    expect(tasks.length).toBeGreaterThanOrEqual(5);
    expect(new Set(tasks.map((task) => task.status))).toEqual(new Set(['completed', 'failed', 'cancelled']));
    expect(backgroundErrors).toEqual([]);
  });
});

describe('interop: ext-tasks 0.2.2 on the SDK v2 client, 2026-07-28 tasks extension', () => {
  let fixture: HttpFixture;
  let client: Client;
  let session: TaskEnabledSession;
  let exchanges: RawExchange[];
  const inputs: SeenInput[] = [];
  const backgroundErrors: Error[] = [];

  beforeAll(async () => {
    fixture = await HttpFixture.start();
    client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
    // The SDK client's 2026 codecs reject `resultType: "task"` and `tasks/*`: ext-tasks sends those through the
    // host's raw coordinator, framed with the same envelope values the client itself uses.
    const raw = fetchRawDispatch(fixture.url);
    exchanges = raw.exchanges;
    session = createTaskSessionFromClient(client, {
      endpointId: 'fixture-2026-07-28',
      rawDispatch: raw.dispatch,
      v2RequestFraming: {
        protocolVersion: client.getNegotiatedProtocolVersion() as string,
        clientInfo: CLIENT_INFO,
        clientCapabilities: CLIENT_CAPABILITIES,
      },
      onInputRequest: inputHandler(inputs),
      onError: (error) => backgroundErrors.push(error),
    });
  });
  afterAll(async () => {
    await session?.close();
    await client?.close();
    await fixture?.close();
  });

  /** The raw exchanges of one task (its tools/call and every tasks/* request), in order. */
  const wireOf = (taskId: string | undefined): RawExchange[] =>
    exchanges.filter(
      (exchange) =>
        exchange.request.params?.['taskId'] === taskId ||
        (exchange.response?.['result'] as Record<string, unknown> | undefined)?.['taskId'] === taskId,
    );

  it('negotiates 2026-07-28 through server/discover, where the extension is advertised', () => {
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks']).toEqual({});
    // spec §3.7: no legacy tasks capability under a version that has the extension.
    expect(client.getServerCapabilities()).not.toHaveProperty('tasks');
    expect(session.capabilities).toEqual({
      inventory: 'known-handles',
      execution: true,
      cancellation: true,
      inputResponses: true,
      requestedRetention: false,
    });
  });

  it('gets a plain result for a tool without tasks', async () => {
    const execution = await session.callTool<ToolResult>('greet', { name: 'Ada' });
    expect(execution.kind).toBe('immediate');
    const { outcome } = await execution.settle();
    expect(completed(outcome)).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });
  });

  it('runs a server-directed task to completion', async () => {
    const execution = await session.callTool<ToolResult>('generate_report', { pages: 2 });
    expect(execution.kind).toBe('task');
    const taskId = execution.handle?.taskId;
    const { outcome, statuses } = await settle(execution);

    // The wire: a flat CreateTaskResult (spec E3), then tasks/get with the task's id in Mcp-Name (E17).
    const [create, ...polls] = wireOf(taskId);
    expect(create?.request).toMatchObject({ method: 'tools/call', params: { name: 'generate_report' } });
    expect(create?.request.params?.['task']).toBeUndefined();
    expect(create?.response?.['result']).toMatchObject({ resultType: 'task', taskId, status: 'working' });
    expect(create?.response?.['result']).not.toHaveProperty('task');
    expect(polls.length).toBeGreaterThan(0);
    for (const poll of polls) {
      expect(poll.request.method).toBe('tasks/get');
      expect(poll.headers).toMatchObject({ 'mcp-method': 'tasks/get', 'mcp-name': taskId });
      expect(poll.response?.['result']).toMatchObject({ resultType: 'complete', taskId });
    }
    const final = polls.at(-1)?.response?.['result'] as Record<string, unknown>;
    expect(final).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Report ready: 2 pages' }] },
    });
    // The inlined result is the tool's CallToolResult, which on 2026-07-28 carries `resultType: "complete"` like
    // every result (ext-tasks' CompleteCallToolResult schema requires it), and no related-task `_meta` (spec §3.6).
    expect(final['result']).toMatchObject({ resultType: 'complete' });
    expect(JSON.stringify(final['result'])).not.toContain(RELATED_TASK);

    const result = completed(outcome);
    expect(result.content).toEqual([{ type: 'text', text: 'Report ready: 2 pages' }]);
    expect(statuses.at(-1)).toBe('completed');
  });

  it('completes a task whose tool reported an error (isError), as the extension requires', async () => {
    const execution = await session.callTool<ToolResult>('failing_job', {});
    expect(execution.kind).toBe('task');
    const { outcome, lastTask } = await settle(execution);
    // spec E15: `failed` is only for JSON-RPC errors; an isError result completes the task.
    expect(lastTask?.status).toBe('completed');
    const result = completed(outcome);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('The job failed: the input data is corrupt.');
  });

  it('fails a task with the JSON-RPC error the tool raised', async () => {
    const execution = await session.callTool<ToolResult>('protocol_error_job', {});
    expect(execution.kind).toBe('task');
    const { outcome, lastTask } = await settle(execution);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error).toBeInstanceOf(TaskFailedError);
    expect(outcome.error.code).toBe(-32603);
    expect(outcome.error.message).toBe('protocol_error_job: the upstream service refused the request');
    expect(outcome.error.data).toEqual({ upstream: 'inventory', retryable: false });
    expect(lastTask?.status).toBe('failed');
    const final = wireOf(execution.handle?.taskId).at(-1)?.response?.['result'];
    expect(final).toMatchObject({ status: 'failed', error: { code: -32603 } });
  });

  it('cancels a running task', async () => {
    const execution = await session.callTool<ToolResult>('slow_compute', { seconds: 30, label: 'stop' });
    expect(execution.kind).toBe('task');
    const taskId = execution.handle?.taskId as TaskId;
    await execution.cancel();
    const { outcome } = await settle(execution);
    expect(outcome.status).toBe('cancelled');
    expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskCancelledError);

    // spec E13: an empty acknowledgement, sent with the task's id in Mcp-Name (E17).
    const cancel = wireOf(taskId).find((exchange) => exchange.request.method === 'tasks/cancel');
    expect(cancel?.headers).toMatchObject({ 'mcp-method': 'tasks/cancel', 'mcp-name': taskId });
    expect(cancel?.response?.['result']).toEqual({ resultType: 'complete' });
    // The cancellation is cooperative, but our server stops the work: the task ends `cancelled`.
    await expect(session.task(taskId).snapshot()).resolves.toMatchObject({ taskId, status: 'cancelled' });
  });

  it('answers an input request with tasks/update through the session’s input routing', async () => {
    const before = inputs.length;
    const execution = await session.callTool<ToolResult>('confirm_delete', { filename: 'yes-please.txt' });
    expect(execution.kind).toBe('task');
    const taskId = execution.handle?.taskId;
    const { outcome, statuses } = await settle(execution);

    const seen = inputs.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.request).toMatchObject({
      kind: 'elicitation',
      params: { message: 'Delete yes-please.txt?', requestedSchema: { properties: { confirm: { type: 'boolean' } } } },
    });
    const inputId = seen[0]?.context.inputId as string;
    expect(seen[0]?.context).toMatchObject({ scope: 'task', delivery: 'task-update', taskId, inputId });
    expect(statuses).toContain('input_required');

    // The wire: tasks/get listed the request under its key (spec E8), tasks/update answered it and was acked (E12).
    const wire = wireOf(taskId);
    const asked = wire.find(
      (exchange) => (exchange.response?.['result'] as { status?: string })?.status === 'input_required',
    );
    expect(asked?.response?.['result']).toMatchObject({
      inputRequests: { [inputId]: { method: 'elicitation/create', params: { message: 'Delete yes-please.txt?' } } },
    });
    const update = wire.find((exchange) => exchange.request.method === 'tasks/update');
    expect(update?.headers).toMatchObject({ 'mcp-method': 'tasks/update', 'mcp-name': taskId });
    expect(update?.request.params).toMatchObject({
      taskId,
      inputResponses: { [inputId]: { action: 'accept', content: { confirm: true } } },
    });
    expect(update?.response?.['result']).toEqual({ resultType: 'complete' });

    expect(text(completed(outcome))).toBe('Deleted yes-please.txt');
  });

  it('answers two outstanding input requests in one tasks/update', async () => {
    const before = inputs.length;
    const execution = await session.callTool<ToolResult>('multi_input', {});
    const { outcome } = await settle(execution);
    const seen = inputs.slice(before);
    expect(seen.map((input) => input.request.params?.['message']).sort()).toEqual([
      'Proceed with the import?',
      'Your name?',
    ]);
    // spec E10: distinct keys.
    expect(new Set(seen.map((input) => input.context.inputId)).size).toBe(2);
    const updates = wireOf(execution.handle?.taskId).filter((exchange) => exchange.request.method === 'tasks/update');
    expect(updates).toHaveLength(1);
    expect(Object.keys(updates[0]?.request.params?.['inputResponses'] as object).sort()).toEqual(
      seen.map((input) => input.context.inputId).sort(),
    );
    expect(text(completed(outcome))).toBe('name="Ada" confirm=true');
  });

  it('finishes a multi-round-trip input before handing off to a task', async () => {
    const before = inputs.length;
    const execution = await session.callTool<ToolResult>('test_tool_with_task', {});
    // spec E5: the user_name round is answered on the tools/call itself (a retry), then the task is created.
    const seen = inputs.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.request.params?.['message']).toBe('What is your name?');
    expect(seen[0]?.context).toMatchObject({ scope: 'request', delivery: 'request-retry', inputId: 'user_name' });
    expect(execution.kind).toBe('task');
    const calls = exchanges.filter(
      (exchange) =>
        exchange.request.method === 'tools/call' && exchange.request.params?.['name'] === 'test_tool_with_task',
    );
    expect(calls.map((exchange) => (exchange.response?.['result'] as { resultType?: string })?.resultType)).toEqual([
      'input_required',
      'task',
    ]);
    expect(calls[1]?.request.params?.['inputResponses']).toEqual({
      user_name: { action: 'accept', content: { name: 'Ada' } },
    });

    const { outcome } = await settle(execution);
    expect(text(completed(outcome))).toBe('Hello Ada, your task is complete.');
  });

  it('reported no background errors', () => {
    expect(backgroundErrors).toEqual([]);
  });
});
