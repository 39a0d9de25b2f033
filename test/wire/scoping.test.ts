import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, HttpPeer, eventually, type RawPeer } from '../helpers/rawWire.js';

async function newTask(peer: RawPeer, seconds = 5): Promise<string> {
  const response = await peer.request('tools/call', {
    name: 'slow_compute',
    arguments: { seconds, label: 'scope' },
    task: {},
  });
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return (response.result?.['task'] as { taskId: string }).taskId;
}

describe('owner scoping with authentication (R63 R67 R68)', () => {
  let fixture: HttpFixture;
  let alice: HttpPeer;
  let bob: HttpPeer;

  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: 'token-a:alice,token-b:bob' } });
    alice = await fixture.peer({ authorization: 'Bearer token-a' });
    bob = await fixture.peer({ authorization: 'Bearer token-b' });
    await alice.initialize();
    await bob.initialize();
  });
  afterAll(async () => {
    await alice.close();
    await bob.close();
    await fixture.close();
  });

  it('gives another principal exactly the error of a missing task, for every method', async () => {
    const taskId = await newTask(alice);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const foreign = await bob.request(method, { taskId });
      const missing = await bob.request(method, { taskId: '00000000-0000-4000-8000-000000000000' });
      expect(foreign.error, method).toEqual(missing.error);
      expect(foreign.error?.code).toBe(-32602);
    }
    // The owner still has it, untouched by the attempts.
    expect((await alice.request('tasks/get', { taskId })).result?.['status']).toBe('working');
    await alice.request('tasks/cancel', { taskId });
  });

  it('lists only the caller’s own tasks', async () => {
    const mine = await newTask(alice, 0);
    const theirs = await newTask(bob, 0);
    const ids = async (peer: RawPeer) =>
      ((await peer.request('tasks/list')).result?.['tasks'] as Array<{ taskId: string }>).map((t) => t.taskId);
    expect(await ids(alice)).toContain(mine);
    expect(await ids(alice)).not.toContain(theirs);
    expect(await ids(bob)).toContain(theirs);
    expect(await ids(bob)).not.toContain(mine);
  });

  it('keeps the principal across sessions: a reconnecting client still reaches its tasks', async () => {
    const taskId = await newTask(alice, 0);
    const again = await fixture.peer({ authorization: 'Bearer token-a' });
    await again.initialize();
    expect((await again.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    await again.close();
  });
});

describe('owner scoping without authentication (R64–R66)', () => {
  let fixture: HttpFixture;
  afterAll(async () => fixture.close());
  beforeAll(async () => {
    fixture = await HttpFixture.start();
  });

  it('makes the task id the capability, while each session lists only its own tasks', async () => {
    const one = await fixture.peer();
    const two = await fixture.peer();
    await one.initialize();
    await two.initialize();
    const taskId = await newTask(one, 0);
    expect((await two.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    const listed = (await two.request('tasks/list')).result?.['tasks'] as Array<{ taskId: string }>;
    expect(listed.map((t) => t.taskId)).not.toContain(taskId);
    await one.close();
    await two.close();
  });

  it('does not offer tasks/list where callers cannot be told apart (no session)', async () => {
    const stateless = new HttpPeer(fixture.url);
    const created = await stateless.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'x' },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    expect(stateless.sessionId).toBeUndefined();
    expect((await stateless.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    expect((await stateless.request('tasks/list')).error?.code).toBe(-32601);
    await stateless.close();
  });
});

describe('strict mode: tasks bound to their session', () => {
  it('refuses another session exactly like a missing task', async () => {
    const fixture = await HttpFixture.start({ env: { MCP_TASKS_BIND_TO_SESSION: '1' } });
    try {
      const one = await fixture.peer();
      const two = await fixture.peer();
      await one.initialize();
      await two.initialize();
      const taskId = await newTask(one, 0);
      const foreign = await two.request('tasks/get', { taskId });
      const missing = await two.request('tasks/get', { taskId: 'missing' });
      expect(foreign.error).toEqual(missing.error);
      expect((await one.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
      await one.close();
      await two.close();
    } finally {
      await fixture.close();
    }
  });
});

describe('limits (R69 R70)', () => {
  it('rate-limits task operations per owner and says so', async () => {
    const fixture = await HttpFixture.start({ env: { MCP_TASKS_RATE_LIMIT: '2:4' } });
    try {
      const peer = await fixture.peer();
      await peer.initialize();
      const responses = await Promise.all(Array.from({ length: 10 }, () => peer.request('tasks/get', { taskId: 'x' })));
      const limited = responses.filter((r) => (r.error?.data as { limit?: string } | undefined)?.limit === 'rate');
      expect(limited.length).toBeGreaterThanOrEqual(5);
      expect(limited[0]?.error?.code).toBe(-32600);
      // Plain MCP traffic is not limited.
      expect((await peer.request('tools/call', { name: 'greet', arguments: { name: 'z' } })).result).toBeDefined();
      await peer.close();
    } finally {
      await fixture.close();
    }
  });

  it('caps concurrent tasks per owner', async () => {
    const fixture = await HttpFixture.start({ env: { MCP_TASKS_MAX_ACTIVE: '2' } });
    try {
      const peer = await fixture.peer();
      await peer.initialize();
      const first = await newTask(peer, 30);
      await newTask(peer, 30);
      const third = await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} });
      expect(third.error?.code).toBe(-32600);
      expect(third.error?.message).toMatch(/Too many active tasks/);
      await peer.request('tasks/cancel', { taskId: first });
      await eventually(
        async () =>
          (await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).result,
      );
      await peer.close();
    } finally {
      await fixture.close();
    }
  });
});
