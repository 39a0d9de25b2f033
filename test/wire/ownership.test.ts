import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, HttpPeer, ModernPeer, eventually, type Message, type Response } from '../helpers/rawWire.js';

const MISSING = '00000000-0000-4000-8000-000000000000';
const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';

/** What a caller on either wire can be asked to do with a task id. */
interface Probe {
  name: string;
  call(method: string, params: Record<string, unknown>): Promise<Response>;
}

function legacyProbe(name: string, peer: HttpPeer): Probe {
  return { name, call: (method, params) => peer.request(method, params) };
}

function modernProbe(name: string, peer: ModernPeer): Probe {
  return { name, call: (method, params) => peer.request(method, params) };
}

/** A 2025-11-25 task-augmented call; returns the new task's id. */
async function createdTask(peer: HttpPeer, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await peer.request('tools/call', { name, arguments: args, task: {} });
  expect(created.error, JSON.stringify(created.error)).toBeUndefined();
  return (created.result?.['task'] as { taskId: string }).taskId;
}

/** The error a caller gets for `method` on `taskId`, next to the one it gets for a task that does not exist. */
async function expectLikeMissing(probe: Probe, method: string, taskId: string, extra: Record<string, unknown> = {}) {
  const foreign = await probe.call(method, { taskId, ...extra });
  const missing = await probe.call(method, { taskId: MISSING, ...extra });
  expect(foreign.result, `${probe.name} ${method}`).toBeUndefined();
  expect(foreign.error, `${probe.name} ${method}`).toBeDefined();
  // The message names the id asked for; everything else is identical.
  const normalise = (error: Response['error'], id: string) => JSON.parse(JSON.stringify(error).replaceAll(id, '<id>'));
  expect(normalise(foreign.error, taskId), `${probe.name} ${method}`).toEqual(normalise(missing.error, MISSING));
}

describe('ownership: a principal’s task is reachable only by that principal, on every method and path', () => {
  let fixture: HttpFixture;
  let alice: HttpPeer;
  let aliceModern: ModernPeer;
  let strangers: Probe[];
  let legacyStrangers: HttpPeer[];

  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: 'token-a:alice,token-b:bob' } });
    alice = await fixture.peer({ authorization: 'Bearer token-a' });
    await alice.initialize();
    aliceModern = new ModernPeer(fixture.url, { authorization: 'Bearer token-a' });
    const bob = await fixture.peer({ authorization: 'Bearer token-b' });
    const anonymous = await fixture.peer();
    const wrongToken = await fixture.peer({ authorization: 'Bearer not-a-token' });
    for (const peer of [bob, anonymous, wrongToken]) await peer.initialize();
    // No initialize: the 2025 stateless idiom, one exchange per request.
    const stateless = new HttpPeer(fixture.url);
    legacyStrangers = [bob, anonymous, wrongToken];
    strangers = [
      legacyProbe('bob (2025 session)', bob),
      legacyProbe('anonymous (2025 session)', anonymous),
      legacyProbe('wrong token (2025 session)', wrongToken),
      legacyProbe('stateless 2025', stateless),
      modernProbe('bob (2026)', new ModernPeer(fixture.url, { authorization: 'Bearer token-b' })),
      modernProbe('anonymous (2026)', new ModernPeer(fixture.url)),
      modernProbe('wrong token (2026)', new ModernPeer(fixture.url, { authorization: 'Bearer not-a-token' })),
    ];
  });
  afterAll(async () => {
    await alice.close();
    for (const peer of legacyStrangers) await peer.close();
    await fixture.close();
  });

  const aliceTask = (tool = 'slow_compute', args: Record<string, unknown> = { seconds: 30, label: 'own' }) =>
    createdTask(alice, tool, args);

  it('2025-11-25 and 2026-07-28 task methods answer strangers exactly as for a missing task', async () => {
    const taskId = await aliceTask();
    for (const probe of strangers) {
      const modern = probe.name.includes('2026');
      const methods = modern
        ? ['tasks/get', 'tasks/update', 'tasks/cancel']
        : ['tasks/get', 'tasks/result', 'tasks/cancel'];
      for (const method of methods) {
        await expectLikeMissing(probe, method, taskId, method === 'tasks/update' ? { inputResponses: {} } : {});
      }
    }
    for (const peer of legacyStrangers) {
      const listed = (await peer.request('tasks/list')).result?.['tasks'] as Array<{ taskId: string }>;
      expect(listed.map((t) => t.taskId)).not.toContain(taskId);
    }
    // Untouched by every attempt, and still the owner's on both wires.
    expect((await alice.request('tasks/get', { taskId })).result?.['status']).toBe('working');
    expect((await aliceModern.request('tasks/get', { taskId })).result?.['status']).toBe('working');
    expect((await alice.request('tasks/cancel', { taskId })).result?.['status']).toBe('cancelled');
  });

  it('2026-07-28: nobody else answers the task’s questions with tasks/update, even with the right key', async () => {
    const created = await aliceModern.request('tools/call', { name: 'confirm_delete', arguments: { filename: 'a' } });
    const taskId = (created.result as { taskId: string }).taskId;
    const waiting = await eventually(async () => {
      const task = (await aliceModern.request('tasks/get', { taskId })).result;
      return task?.['status'] === 'input_required' ? task : undefined;
    });
    const [key] = Object.keys(waiting['inputRequests'] as object) as [string];
    const accept = { [key]: { action: 'accept', content: { confirm: true } } };
    for (const probe of strangers) {
      if (probe.name.includes('2026'))
        await expectLikeMissing(probe, 'tasks/update', taskId, { inputResponses: accept });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await aliceModern.request('tasks/get', { taskId })).result?.['status']).toBe('input_required');
    // The owner's own answer is what the task sees.
    await aliceModern.request('tasks/update', { taskId, inputResponses: { [key]: { action: 'decline' } } });
    const done = await eventually(async () => {
      const task = (await aliceModern.request('tasks/get', { taskId })).result;
      return task?.['status'] === 'completed' ? task : undefined;
    });
    expect(done['result']).toMatchObject({ content: [{ type: 'text', text: 'Kept a (decline)' }] });
  });

  it('2025-11-25: an answer sent as a response by id lands only from the owner, and the id is unguessable', async () => {
    const taskId = await aliceTask('confirm_delete', { filename: 'b' });
    const result = alice.request('tasks/result', { taskId });
    const asked = await eventually(() => alice.serverRequests.find((r) => r.method === 'elicitation/create'));
    const id = String(asked.id);
    expect(id.startsWith(`mcp-tasks-input:${taskId}:`)).toBe(true);
    expect(id).not.toBe(`mcp-tasks-input:${taskId}:input-1`);
    // At least 128 random bits after the task id.
    expect(id.slice(`mcp-tasks-input:${taskId}:`.length)).toMatch(/[0-9a-f]{32}/);
    const forged = (peer: HttpPeer) =>
      peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'accept', content: { confirm: true } } }));
    for (const peer of [...legacyStrangers, new HttpPeer(fixture.url)]) await forged(peer);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await alice.request('tasks/get', { taskId })).result?.['status']).toBe('input_required');
    await alice.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'decline' } }));
    expect((await result).result?.['content']).toEqual([{ type: 'text', text: 'Kept b (decline)' }]);
  });

  it('SEP-1686: a client-chosen task id resolves only within its creator’s tasks', async () => {
    const clientTaskId = randomUUID();
    const call = alice.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 3, label: 'sep' },
      _meta: { [SEP_TASK]: { taskId: clientTaskId } },
    });
    await eventually(() => alice.notifications.find((n) => n.method === 'notifications/tasks/created'));
    const related = { _meta: { [SEP_RELATED]: { taskId: clientTaskId } } };
    for (const peer of legacyStrangers) {
      const probe = legacyProbe('sep stranger', peer);
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/delete']) {
        const foreign = await probe.call(method, { taskId: clientTaskId, ...related });
        const missing = await probe.call(method, { taskId: MISSING, _meta: { [SEP_RELATED]: { taskId: MISSING } } });
        expect(foreign.error?.code, method).toBe(missing.error?.code);
        expect(foreign.result, method).toBeUndefined();
      }
    }
    expect((await alice.request('tasks/get', { taskId: clientTaskId, ...related })).result?.['status']).toBe('working');
    expect((await call).result?.['content']).toEqual([{ type: 'text', text: 'Computed sep in 3s' }]);
  });

  it('subscriptions/listen honours only the caller’s own task ids', async () => {
    const taskId = await aliceTask('slow_compute', { seconds: 1, label: 'listen' });
    const acknowledged = (listen: { first: Message | undefined }) =>
      (listen.first?.params?.['notifications'] as { taskIds: string[] }).taskIds;
    for (const headers of [{}, { authorization: 'Bearer token-b' }, { authorization: 'Bearer nope' }] as Array<
      Record<string, string>
    >) {
      const stranger = await new ModernPeer(fixture.url, headers).listen({ taskIds: [taskId] });
      expect(acknowledged(stranger)).toEqual([]);
      stranger.close();
    }
    const own = await aliceModern.listen({ taskIds: [taskId] });
    expect(acknowledged(own)).toEqual([taskId]);
    await eventually(() =>
      own.messages.find((m) => m.method === 'notifications/tasks' && m.params?.['status'] === 'completed'),
    );
    own.close();
  });
});

describe('ownership: a task created without authentication keeps the id as its capability', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: 'token-a:alice' } });
  });
  afterAll(async () => fixture.close());

  it('any unauthenticated caller holding the id reaches it, on both wires', async () => {
    const creator = await fixture.peer();
    await creator.initialize();
    const taskId = await createdTask(creator, 'slow_compute', { seconds: 30, label: 'open' });
    const other = await fixture.peer();
    await other.initialize();
    expect((await other.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    expect((await new HttpPeer(fixture.url).request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    expect((await new ModernPeer(fixture.url).request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    expect((await other.request('tasks/cancel', { taskId })).result?.['status']).toBe('cancelled');
    await creator.close();
    await other.close();
  });
});

describe('ownership: strict session binding reaches past no other path', () => {
  it('a session-bound task is missing for stateless 2025 and 2026-07-28 callers too', async () => {
    const fixture = await HttpFixture.start({ env: { MCP_TASKS_BIND_TO_SESSION: '1' } });
    try {
      const creator = await fixture.peer();
      await creator.initialize();
      const taskId = await createdTask(creator, 'slow_compute', { seconds: 30, label: 'bound' });
      await expectLikeMissing(legacyProbe('stateless 2025', new HttpPeer(fixture.url)), 'tasks/get', taskId);
      const modern = modernProbe('anonymous (2026)', new ModernPeer(fixture.url));
      await expectLikeMissing(modern, 'tasks/get', taskId);
      await expectLikeMissing(modern, 'tasks/cancel', taskId);
      expect((await creator.request('tasks/cancel', { taskId })).result?.['status']).toBe('cancelled');
      await creator.close();
    } finally {
      await fixture.close();
    }
  });
});
