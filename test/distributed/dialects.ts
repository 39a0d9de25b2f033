import { randomUUID } from 'node:crypto';

import { expect } from 'vitest';

import type { HttpPeer, Message, Response } from '../helpers/rawWire.js';

/** What a task produced, as a requestor of any generation sees it. */
export interface ToolOutcome {
  content?: unknown;
  isError?: boolean;
  error?: { code: number; message: string; data?: unknown };
  /** The task was cancelled (generations that return no outcome for a cancelled task). */
  cancelled?: boolean;
}

export interface WireTaskView {
  taskId: string;
  status: string;
  statusMessage?: string;
}

/**
 * One wire generation as the distributed tests drive it. Every test runs once per entry of {@link DIALECTS}, so a
 * generation added here is covered across instances (create on one, poll, fetch, answer and cancel on another).
 */
export interface WireDialect {
  readonly name: string;
  /**
   * Where the requestor answers input and cancels: through any instance, or (SEP-1686, whose input requests and
   * cancellation travel with the original request) through the instance holding the original request.
   */
  readonly routing: { input: 'any' | 'creator'; cancel: 'any' | 'creator' };
  /** Opens this generation's session on a fresh peer. */
  initialize(peer: HttpPeer): Promise<void>;
  /** Starts `tool` as a task and returns its id. */
  create(peer: HttpPeer, tool: string, args: Record<string, unknown>): Promise<string>;
  get(peer: HttpPeer, taskId: string): Promise<WireTaskView>;
  /** Waits on this instance for the task's end (blocking where the generation can) and returns its outcome. */
  result(peer: HttpPeer, taskId: string): Promise<ToolOutcome>;
  /**
   * Answers every input request of the task through this instance with `answer`, until the task ends; returns the
   * outcome and the requests seen.
   */
  answerInput(
    peer: HttpPeer,
    taskId: string,
    answer: (request: Message) => Record<string, unknown>,
  ): Promise<{ outcome: ToolOutcome; requests: Message[] }>;
  cancel(peer: HttpPeer, taskId: string): Promise<WireTaskView>;
  /** The caller's task ids, where the generation can list them. */
  list?(peer: HttpPeer): Promise<string[]>;
}

const RELATED = 'io.modelcontextprotocol/related-task';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function outcomeOf(response: Response): ToolOutcome {
  if (response.error) return { error: response.error };
  const result = response.result ?? {};
  return { content: result['content'], ...(result['isError'] === true && { isError: true }) };
}

function ok(response: Response): Record<string, unknown> {
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return response.result as Record<string, unknown>;
}

/** MCP 2025-11-25: task-augmented tools/call, tasks/get|result|cancel|list; input travels over tasks/result. */
export const core20251125: WireDialect = {
  name: '2025-11-25',
  routing: { input: 'any', cancel: 'any' },
  async initialize(peer) {
    const init = await peer.initialize({ elicitation: {}, sampling: {} }, '2025-11-25');
    expect(init.result?.['protocolVersion']).toBe('2025-11-25');
  },
  async create(peer, tool, args) {
    const result = ok(await peer.request('tools/call', { name: tool, arguments: args, task: {} }));
    return (result['task'] as { taskId: string }).taskId;
  },
  async get(peer, taskId) {
    return ok(await peer.request('tasks/get', { taskId })) as unknown as WireTaskView;
  },
  async result(peer, taskId) {
    return outcomeOf(await peer.request('tasks/result', { taskId }));
  },
  async answerInput(peer, taskId, answer) {
    const requests: Message[] = [];
    peer.onServerRequest = (request) => {
      requests.push(request);
      // spec R24 R38: the request names the task it belongs to.
      expect((request.params?.['_meta'] as Record<string, unknown>)[RELATED]).toEqual({ taskId });
      return answer(request);
    };
    try {
      return { outcome: outcomeOf(await peer.request('tasks/result', { taskId })), requests };
    } finally {
      peer.onServerRequest = undefined;
    }
  },
  async cancel(peer, taskId) {
    return ok(await peer.request('tasks/cancel', { taskId })) as unknown as WireTaskView;
  },
  async list(peer) {
    const tasks = ok(await peer.request('tasks/list'))['tasks'] as WireTaskView[];
    return tasks.map((task) => task.taskId);
  },
};

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const MODERN_VERSION = '2026-07-28';

/** The per-request envelope of the 2026-07-28 wire, declaring the tasks extension (spec E1). */
export function modernEnvelope(): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'distributed-test', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
  };
}

/** One stateless 2026-07-28 request with its envelope and routing headers. */
export function modernRequest(
  peer: HttpPeer,
  method: string,
  params: Record<string, unknown>,
  name?: string,
): Promise<Response> {
  return peer.request(
    method,
    { ...params, _meta: modernEnvelope() },
    {
      headers: {
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': method,
        ...(name !== undefined && { 'mcp-name': name }),
      },
    },
  );
}

/** Polls `tasks/get` at the task's pollIntervalMs until `done` holds. */
async function pollExt(
  peer: HttpPeer,
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const task = ok(await modernRequest(peer, 'tasks/get', { taskId }, taskId));
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${String(task['status'])}`);
    await sleep(Math.min(100, Number(task['pollIntervalMs'] ?? 100)));
  }
}

function extOutcome(task: Record<string, unknown>): ToolOutcome {
  if (task['status'] === 'cancelled') return { cancelled: true };
  if (task['error']) return { error: task['error'] as ToolOutcome['error'] };
  const result = (task['result'] ?? {}) as Record<string, unknown>;
  return { content: result['content'], ...(result['isError'] === true && { isError: true }) };
}

/**
 * The 2026 tasks extension (`io.modelcontextprotocol/tasks`) on the 2026-07-28 wire: stateless requests, the server
 * decides on a task, results inline in tasks/get, input answered with tasks/update, no tasks/list.
 */
export const ext2026: WireDialect = {
  name: 'ext-2026 (io.modelcontextprotocol/tasks)',
  routing: { input: 'any', cancel: 'any' },
  async initialize(peer) {
    const discovered = ok(await modernRequest(peer, 'server/discover', {}));
    const capabilities = discovered['capabilities'] as { extensions?: Record<string, unknown> };
    expect(capabilities.extensions?.[TASKS_EXTENSION]).toBeDefined();
  },
  async create(peer, tool, args) {
    const result = ok(await modernRequest(peer, 'tools/call', { name: tool, arguments: args }, tool));
    expect(result['resultType']).toBe('task');
    return result['taskId'] as string;
  },
  async get(peer, taskId) {
    return ok(await modernRequest(peer, 'tasks/get', { taskId }, taskId)) as unknown as WireTaskView;
  },
  async result(peer, taskId) {
    return extOutcome(await pollExt(peer, taskId, (task) => TERMINAL.has(task['status'] as string)));
  },
  async answerInput(peer, taskId, answer) {
    const requests: Message[] = [];
    const answered = new Set<string>();
    const task = await pollExt(peer, taskId, (current) => {
      if (TERMINAL.has(current['status'] as string)) return true;
      const pending = (current['inputRequests'] ?? {}) as Record<string, Message>;
      const fresh = Object.entries(pending).filter(([key]) => !answered.has(key));
      if (fresh.length === 0) return false;
      for (const [key, request] of fresh) {
        answered.add(key);
        requests.push(request);
        void modernRequest(peer, 'tasks/update', { taskId, inputResponses: { [key]: answer(request) } }, taskId).then(
          (response) => expect(response.error, JSON.stringify(response.error)).toBeUndefined(),
        );
      }
      return false;
    });
    return { outcome: extOutcome(task), requests };
  },
  async cancel(peer, taskId) {
    // spec E13: an empty acknowledgement; the task itself shows the status.
    expect(ok(await modernRequest(peer, 'tasks/cancel', { taskId }, taskId))['resultType']).toBe('complete');
    return this.get(peer, taskId);
  },
};

const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';
const sepRelated = (taskId: string) => ({ [SEP_RELATED]: { taskId } });

/** The original requests of SEP-1686 tasks: they stay open until the task ends and carry its input and cancellation. */
const sepOriginals = new Map<string, { peer: HttpPeer; requestId: string; response: Promise<Response> }>();
/** Who answers the input requests of a SEP-1686 task; a request that arrives first waits for its answerer. */
const sepAnswerers = new Map<string, (request: Message) => Record<string, unknown>>();

async function answerSepRequest(request: Message): Promise<Record<string, unknown>> {
  const related = (request.params?.['_meta'] as Record<string, unknown> | undefined)?.[SEP_RELATED];
  const taskId = (related as { taskId?: string } | undefined)?.taskId ?? '';
  for (;;) {
    const answerer = sepAnswerers.get(taskId);
    if (answerer) return answerer(request);
    await sleep(10);
  }
}

/**
 * SEP-1686: the requestor names the task in `_meta`; the original request stays open and answers with the outcome,
 * delivering input requests meanwhile; `notifications/cancelled` for it cancels the task; tasks/get|result|list work on
 * any instance. Status `submitted` (not started yet) is reported here as `working`.
 */
export const sep1686: WireDialect = {
  name: 'SEP-1686',
  routing: { input: 'creator', cancel: 'creator' },
  async initialize(peer) {
    await core20251125.initialize(peer);
    // Input requests arrive on the original request's stream as soon as the tool asks.
    peer.onServerRequest = answerSepRequest;
  },
  async create(peer, tool, args) {
    const taskId = randomUUID();
    const requestId = `sep-${taskId}`;
    const response = peer.request(
      'tools/call',
      { name: tool, arguments: args, _meta: { [SEP_TASK]: { taskId } } },
      { id: requestId },
    );
    sepOriginals.set(taskId, { peer, requestId, response });
    // spec 3.4: announced once durable, before the response.
    await eventuallyTrue(() =>
      peer.notifications.some(
        (n) =>
          n.method === 'notifications/tasks/created' &&
          JSON.stringify(n.params) === JSON.stringify({ _meta: sepRelated(taskId) }),
      ),
    );
    return taskId;
  },
  async get(peer, taskId) {
    const view = ok(await peer.request('tasks/get', { taskId, _meta: sepRelated(taskId) }));
    return { taskId, status: view['status'] === 'submitted' ? 'working' : (view['status'] as string) };
  },
  async result(peer, taskId) {
    let view: WireTaskView;
    for (;;) {
      view = await this.get(peer, taskId);
      if (TERMINAL.has(view.status) || view.status === 'unknown') break;
      await sleep(100);
    }
    if (view.status === 'cancelled') return { cancelled: true };
    // spec 3.3: tasks/result answers for completed tasks; a failed one names its error in tasks/get.
    if (view.status !== 'completed') return { error: { code: -32603, message: `task ${view.status}` } };
    return outcomeOf(await peer.request('tasks/result', { taskId, _meta: sepRelated(taskId) }));
  },
  async answerInput(peer, taskId, answer) {
    const original = sepOriginals.get(taskId);
    if (!original || original.peer !== peer) throw new Error('SEP-1686 input travels with the original request');
    const requests: Message[] = [];
    // spec 4.4: associated requests carry the related-task _meta (they are routed by it).
    sepAnswerers.set(taskId, (request) => {
      requests.push(request);
      return answer(request);
    });
    try {
      return { outcome: outcomeOf(await original.response), requests };
    } finally {
      sepAnswerers.delete(taskId);
    }
  },
  async cancel(peer, taskId) {
    const original = sepOriginals.get(taskId);
    if (!original || original.peer !== peer) throw new Error('SEP-1686 cancels through the original request');
    // spec 4.8: notifications/cancelled for the original request cancels the task.
    await peer.notify('notifications/cancelled', { requestId: original.requestId, reason: 'cancelled by the test' });
    let view = await this.get(peer, taskId);
    while (view.status !== 'cancelled' && !TERMINAL.has(view.status)) {
      await sleep(20);
      view = await this.get(peer, taskId);
    }
    return view;
  },
};

async function eventuallyTrue(probe: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(10);
  }
}

/** The generations the distributed suites cover: each test runs once per entry. */
export const DIALECTS: WireDialect[] = [core20251125, ext2026, sep1686];
