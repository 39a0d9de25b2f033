import { randomUUID } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually, type HttpPeer, type Message } from '../helpers/rawWire.js';
import { SEP_CARRIER_WINDOW_MS } from '../../src/dialects/sep1686/QuestionCarrier.js';
import { logged, loggedTasks } from '../helpers/stepLog.js';
import { WORKFLOW_STORES, kill9, onFixture, workflowEnvironment } from '../helpers/workflowWire.js';

type Json = Record<string, unknown>;

/** One wire generation's way of driving a task (2025-11-25 core tasks, the 2026 extension, or SEP-1686). */
interface TaskWire {
  create(tool: string, args: Json): Promise<string>;
  get(taskId: string): Promise<Json>;
  /** Answers the task's question with `confirm`; returns the question as the requestor saw it and the final result. */
  answer(taskId: string, confirm: boolean): Promise<{ question: Json; result: Json }>;
  result(taskId: string): Promise<Json>;
  cancel(taskId: string): Promise<void>;
  /** The key the fixture's step log (`log`) knows the task by, once the task has logged a step. */
  stepKey(taskId: string, log: string): Promise<string>;
  close(): Promise<void>;
}

/** Bearer token of the one principal the SEP-1686 requestor is: its client-chosen ids are scoped to it across restarts. */
const SEP_TOKEN = 'token-sep';
const TOKENS = `${SEP_TOKEN}:sep-requestor`;

const TERMINAL = ['completed', 'failed', 'cancelled', 'unknown'];

/**
 * The SEP-1686 requestor's original requests, by the task id they named, kept across restarts as its job would keep
 * them (docs/generations.md, the retry recipe): their id is what `notifications/cancelled` cancels.
 */
const originals = new Map<string, { requestId: string; params: Json }>();
const sameKey = async (taskId: string) => taskId;

const GENERATIONS: Record<string, (fixture: HttpFixture) => Promise<TaskWire>> = {
  '2025-11-25': async (fixture) => {
    const peer: HttpPeer = await fixture.peer();
    await peer.initialize();
    const get = async (taskId: string) => (await peer.request('tasks/get', { taskId })).result as Json;
    return {
      async create(tool, args) {
        const response = await peer.request('tools/call', { name: tool, arguments: args, task: {} });
        expect(response.error, JSON.stringify(response.error)).toBeUndefined();
        return (response.result?.['task'] as { taskId: string }).taskId;
      },
      get,
      async answer(taskId, confirm) {
        const asked: Message[] = [];
        peer.onServerRequest = (request) => {
          asked.push(request);
          return { action: 'accept', content: { confirm } };
        };
        try {
          // spec R37: the question reaches the requestor through tasks/result, which then returns the result.
          const result = (await peer.request('tasks/result', { taskId })).result as Json;
          expect(asked.map((request) => request.method)).toEqual(['elicitation/create']);
          return { question: asked[0]?.params as Json, result };
        } finally {
          peer.onServerRequest = undefined;
        }
      },
      async result(taskId) {
        return (await peer.request('tasks/result', { taskId })).result as Json;
      },
      async cancel(taskId) {
        await peer.request('tasks/cancel', { taskId });
      },
      stepKey: sameKey,
      close: () => peer.close(),
    };
  },
  'tasks extension': async (fixture) => {
    const peer = new ModernPeer(fixture.url);
    const get = async (taskId: string) => (await peer.request('tasks/get', { taskId })).result as Json;
    const finished = (taskId: string) =>
      eventually(async () => {
        const task = await get(taskId);
        return ['completed', 'failed', 'cancelled'].includes(task['status'] as string) ? task : undefined;
      }, 20_000);
    return {
      async create(tool, args) {
        const response = await peer.request('tools/call', { name: tool, arguments: args });
        expect(response.result?.['resultType']).toBe('task');
        return response.result?.['taskId'] as string;
      },
      get,
      async answer(taskId, confirm) {
        const waiting = await get(taskId);
        const requests = waiting['inputRequests'] as Record<string, Json>;
        const [key] = Object.keys(requests) as [string];
        const update = await peer.request('tasks/update', {
          taskId,
          inputResponses: { [key]: { action: 'accept', content: { confirm } } },
        });
        expect(update.error).toBeUndefined();
        const done = await finished(taskId);
        return { question: requests[key]?.['params'] as Json, result: done['result'] as Json };
      },
      async result(taskId) {
        return (await finished(taskId))['result'] as Json;
      },
      async cancel(taskId) {
        await peer.request('tasks/cancel', { taskId });
      },
      stepKey: sameKey,
      close: async () => {},
    };
  },
  'SEP-1686': async (fixture) => {
    // An authenticated principal owns the tasks it names, so a new session (on a new server) finds them by its ids;
    // an unauthenticated session's tasks would be scoped to that session alone.
    const peer: HttpPeer = await fixture.peer({ authorization: `Bearer ${SEP_TOKEN}` });
    await peer.initialize();
    // The requestor holds each question the server sends (on whichever stream) until a test answers it.
    const questions: Array<{ request: Message; answer(result: Json): void }> = [];
    peer.onServerRequest = (request) => new Promise<Json>((resolve) => questions.push({ request, answer: resolve }));
    const related = (taskId: string) => ({ _meta: { 'modelcontextprotocol.io/related-task': { taskId } } });
    const get = async (taskId: string) =>
      (await peer.request('tasks/get', { taskId, ...related(taskId) })).result as Json;
    const finished = (taskId: string) =>
      eventually(async () => {
        const task = await get(taskId);
        return TERMINAL.includes(task['status'] as string) ? task : undefined;
      }, 20_000);
    /** spec 4.6: a result exists only once the task is completed; it is fetched with tasks/result. */
    const result = async (taskId: string) => {
      const done = await finished(taskId);
      expect(done['status'], JSON.stringify(done)).toBe('completed');
      const response = await peer.request('tasks/result', { taskId, ...related(taskId) });
      expect(response.error, JSON.stringify(response.error)).toBeUndefined();
      return response.result as Json;
    };
    return {
      async create(tool, args) {
        const taskId = randomUUID();
        const requestId = `sep-${taskId}`;
        const params = {
          name: tool,
          arguments: args,
          _meta: { 'modelcontextprotocol.io/task': { taskId, keepAlive: 600_000 } },
        };
        originals.set(taskId, { requestId, params });
        // The original request stays open until the task ends (its answer is the tool's result, fetched here with
        // tasks/result instead); the task is announced on its stream first (spec 3.4).
        peer.request('tools/call', params, { id: requestId }).catch(() => undefined);
        await eventually(() =>
          peer.notifications.some(
            (message) =>
              message.method === 'notifications/tasks/created' &&
              JSON.stringify(message.params?.['_meta']).includes(taskId),
          ),
        );
        return taskId;
      },
      get,
      async answer(taskId, confirm) {
        // spec 4.4: a question whose original request is gone (its server was killed) rides on a poll's stream once
        // the dead holder's mark has lapsed (SEP_CARRIER_WINDOW_MS after its last renewal).
        const asked = await eventually(async () => {
          await get(taskId);
          return questions.shift();
        }, 2 * SEP_CARRIER_WINDOW_MS);
        expect(asked.request.method).toBe('elicitation/create');
        const meta = asked.request.params?.['_meta'] as Json;
        expect(meta['modelcontextprotocol.io/related-task']).toEqual({ taskId });
        asked.answer({ action: 'accept', content: { confirm } });
        return { question: asked.request.params as Json, result: await result(taskId) };
      },
      result,
      async cancel(taskId) {
        // spec 4.8: cancelling the original request cancels its task.
        const original = originals.get(taskId);
        expect(original).toBeDefined();
        await peer.notify('notifications/cancelled', { requestId: original?.requestId, reason: 'stop' });
        // The notification has no answer: the task is cancelled once tasks/get says so.
        await eventually(async () => (await get(taskId))['status'] === 'cancelled');
      },
      async stepKey(_taskId, log) {
        // The engine names SEP-1686 tasks itself and the wire shows only the requestor's id. Each test has a step
        // log of its own with one task in it, so the one key in the log is that task's.
        return eventually(() => {
          const keys = loggedTasks(log);
          expect(keys.length).toBeLessThanOrEqual(1);
          return keys[0];
        });
      },
      close: () => peer.close(),
    };
  },
};

for (const [storeName, spec] of WORKFLOW_STORES) {
  if (spec === undefined) continue;
  describe(`durable workflow tools over HTTP on ${storeName}`, () => {
    const environment = () => workflowEnvironment(spec, { MCP_TASKS_TEST_TOKENS: TOKENS });

    for (const [generation, connect] of Object.entries(GENERATIONS)) {
      /** Runs `body` against one fixture server on the store. */
      const onServer = (env: Record<string, string>, body: (wire: TaskWire) => Promise<void>) =>
        onFixture(env, connect, body);
      /** `before` on a first server, kill -9 of it, then `after` on a second server on the same store. */
      const acrossKill = async <T>(
        env: Record<string, string>,
        before: (wire: TaskWire) => Promise<T>,
        after: (wire: TaskWire, value: T) => Promise<void>,
      ) => {
        const first = await HttpFixture.start({ env });
        const value = await before(await connect(first));
        await kill9(first);
        await onServer(env, (wire) => after(wire, value));
      };

      describe(generation, () => {
        it('kill -9 in the middle of journaled_steps repeats at most one step', async () => {
          const env = environment();
          await acrossKill(
            env,
            async (wire) => {
              const taskId = await wire.create('journaled_steps', { steps: 8, stepMs: 150, label: 'crash' });
              const key = await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG);
              await eventually(() => logged(env.MCP_TASKS_STEP_LOG, key).length >= 3);
              return taskId;
            },
            async (wire, taskId) => {
              const result = await wire.result(taskId);
              expect(JSON.stringify(result['content'])).toContain('crash');
              const runs = (result['structuredContent'] as { runs: number[] }).runs;
              expect(runs).toHaveLength(8);
              expect(runs.every((count) => count === 1 || count === 2)).toBe(true);
              expect(runs.filter((count) => count === 2).length).toBeLessThanOrEqual(1);
            },
          );
        });

        it('kill -9 during durable_sleep still completes close to the original wake time', async () => {
          const env = environment();
          const created = Date.now();
          await acrossKill(
            env,
            async (wire) => {
              const taskId = await wire.create('durable_sleep', { ms: 3000, label: 'nap' });
              const key = await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG);
              // Once `before` has run, the sleep is journaled a moment later (the next write of the same run).
              await eventually(() => logged(env.MCP_TASKS_STEP_LOG, key).includes('before'));
              await new Promise((resolve) => setTimeout(resolve, 400));
              // tasks/get shows a sleeping task as working.
              expect((await wire.get(taskId))['status']).toBe('working');
              return taskId;
            },
            async (wire, taskId) => {
              const upAt = Date.now();
              const result = await wire.result(taskId);
              expect(JSON.stringify(result['content'])).toContain('nap');
              const slept = (result['structuredContent'] as { sleptMs: number }).sleptMs;
              expect(slept).toBeGreaterThanOrEqual(3000);
              // Woken by the durable timer on the new server at the journaled wake time, or at once if the server came
              // back after it: within about one poll (1 s) plus a run (loose: the machine is shared).
              expect(Date.now() - Math.max(created + 3000, upAt)).toBeLessThan(3000);
            },
          );
        });

        it('journaled_question is answered after a restart and prepare ran once', async () => {
          const env = environment();
          await acrossKill(
            env,
            async (wire) => {
              const taskId = await wire.create('journaled_question', { label: 'ship' });
              await eventually(async () => (await wire.get(taskId))['status'] === 'input_required');
              return { taskId, key: await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG) };
            },
            async (wire, { taskId, key }) => {
              // Well past a lease: nothing was running, so nothing was recovered or failed.
              await new Promise((resolve) => setTimeout(resolve, 1000));
              expect((await wire.get(taskId))['status']).toBe('input_required');
              expect(logged(env.MCP_TASKS_STEP_LOG, key)).toEqual(['prepare']);
              const { question, result } = await wire.answer(taskId, true);
              expect(question['message']).toBe('Confirm ship?');
              expect(result['structuredContent']).toEqual({ confirm: true, prepareRuns: 1 });
              expect(JSON.stringify(result['content'])).toContain('ship');
              expect(logged(env.MCP_TASKS_STEP_LOG, key)).toEqual(['prepare', 'finish']);
            },
          );
        });

        it('retries a failing step with growing waits, the task working in between', async () => {
          const env = environment();
          await onServer(env, async (wire) => {
            const taskId = await wire.create('flaky_step', { failures: 3, baseDelayMs: 150, label: 'retry' });
            const key = await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG);
            await eventually(() => logged(env.MCP_TASKS_STEP_LOG, key).length === 2);
            expect((await wire.get(taskId))['status']).toBe('working');
            const result = await wire.result(taskId);
            const { attempts, gaps } = result['structuredContent'] as { attempts: number; gaps: number[] };
            expect(attempts).toBe(4);
            // Jittered into [50 %, 100 %] of 150, 300 and 600 ms. A busy machine only lengthens a gap, so only the
            // least waits are checked: the third's (300 ms) is past the most the first may be (150 ms), so they grow.
            expect(gaps[0]).toBeGreaterThanOrEqual(70);
            expect(gaps[1]).toBeGreaterThanOrEqual(145);
            expect(gaps[2]).toBeGreaterThanOrEqual(295);
          });
        });

        it('a per-task timeout counted from creation ends a durable sleep across a kill -9', async () => {
          const env = environment();
          const created = Date.now();
          await acrossKill(
            env,
            async (wire) => {
              const taskId = await wire.create('timed_sleep', { timeoutMs: 2500, ms: 600_000, label: 'late' });
              const key = await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG);
              await eventually(() => logged(env.MCP_TASKS_STEP_LOG, key).includes('before'));
              expect((await wire.get(taskId))['status']).toBe('working');
              return { taskId, key };
            },
            async (wire, { taskId, key }) => {
              // The ten-minute sleep ends at the deadline on the new server: the task fails with TaskTimeoutError.
              const result = await wire.result(taskId);
              expect(Date.now()).toBeGreaterThanOrEqual(created + 2500);
              expect(result['isError']).toBe(true);
              expect(JSON.stringify(result['content'])).toContain('TaskTimeoutError');
              // 2025-11-25 marks an isError result failed (spec R62); the extension keeps it completed (spec E15), and
              // so does SEP-1686 (its 7.2).
              const final = await wire.get(taskId);
              expect(final['status']).toBe(generation === '2025-11-25' ? 'failed' : 'completed');
              expect(logged(env.MCP_TASKS_STEP_LOG, key)).toEqual(['before']);
            },
          );
        });

        it('a cancel stops journaled_steps at the next step', async () => {
          const env = environment();
          await onServer(env, async (wire) => {
            const taskId = await wire.create('journaled_steps', { steps: 20, stepMs: 200, label: 'stop' });
            const key = await wire.stepKey(taskId, env.MCP_TASKS_STEP_LOG);
            await eventually(() => logged(env.MCP_TASKS_STEP_LOG, key).length >= 2);
            await wire.cancel(taskId);
            const atCancel = logged(env.MCP_TASKS_STEP_LOG, key).length;
            await new Promise((resolve) => setTimeout(resolve, 1000));
            expect((await wire.get(taskId))['status']).toBe('cancelled');
            // The running closure was aborted before it logged; no later step started.
            expect(logged(env.MCP_TASKS_STEP_LOG, key).length).toBe(atCancel);
          });
        });
      });
    }

    it('SEP-1686: steps run once, a sleep is working, the question reaches the requestor and is answered', async () => {
      // Unauthenticated, so the tasks live in the session that named them; the question is answered on the original
      // request's stream (the restart scenarios above use an authenticated requestor).
      const env = environment();
      const fixture = await HttpFixture.start({ env });
      const peer = await fixture.peer();
      try {
        await peer.initialize();
        await peer.openNotificationStream();
        const call = (name: string, args: Json) => {
          const taskId = randomUUID();
          const meta = { 'modelcontextprotocol.io/task': { taskId } };
          return { taskId, done: peer.request('tools/call', { name, arguments: args, _meta: meta }) };
        };
        const get = async (taskId: string) =>
          (await peer.request('tasks/get', { taskId, _meta: { 'modelcontextprotocol.io/related-task': { taskId } } }))
            .result as Json;
        const steps = call('journaled_steps', { steps: 3, stepMs: 20, label: 'sep' });
        expect((await steps.done).result?.['structuredContent']).toEqual({ runs: [1, 1, 1] });

        // (The engine names SEP-1686 tasks itself; the requestor's id maps to it, so the step log is not keyed by it.)
        const nap = call('durable_sleep', { ms: 2000, label: 'sep-nap' });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect((await get(nap.taskId))['status']).toBe('working');
        const slept = (await nap.done).result?.['structuredContent'] as { sleptMs: number };
        expect(slept.sleptMs).toBeGreaterThanOrEqual(2000);

        let answer: (() => void) | undefined;
        const asked: Message[] = [];
        peer.onServerRequest = (request) => {
          asked.push(request);
          return new Promise((resolve) => (answer = () => resolve({ action: 'accept', content: { confirm: true } })));
        };
        const question = call('journaled_question', { label: 'sep-q' });
        await eventually(() => asked.length === 1);
        expect(asked[0]?.method).toBe('elicitation/create');
        expect(asked[0]?.params?.['message']).toBe('Confirm sep-q?');
        expect((asked[0]?.params?.['_meta'] as Json)['modelcontextprotocol.io/related-task']).toEqual({
          taskId: question.taskId,
        });
        expect((await get(question.taskId))['status']).toBe('input_required');
        answer?.();
        expect((await question.done).result?.['structuredContent']).toEqual({ confirm: true, prepareRuns: 1 });
      } finally {
        peer.onServerRequest = undefined;
        await peer.close();
        await fixture.close();
      }
    });

    it('refuses the journal writes of a runner that was superseded (frozen past its lease, then resumed)', async () => {
      const env = environment();
      const first = await HttpFixture.start({ env });
      const second = await HttpFixture.start({ env });
      try {
        const wire = await GENERATIONS['tasks extension']?.(first);
        const taskId = (await wire?.create('journaled_steps', { steps: 6, stepMs: 400, label: 'takeover' })) as string;
        await eventually(() => logged(env.MCP_TASKS_STEP_LOG, taskId).length >= 1);
        // Freeze the runner inside the next step's closure (not inside a SQLite write, whose lock would stay held):
        // its lease lapses and the other server takes the task over.
        await new Promise((resolve) => setTimeout(resolve, 150));
        first.child.kill('SIGSTOP');
        const other = await GENERATIONS['tasks extension']?.(second);
        const result = (await other?.result(taskId)) as Json;
        const resumed = logged(env.MCP_TASKS_STEP_LOG, taskId).length;
        first.child.kill('SIGCONT');
        // The frozen runner's step closure finishes and logs, but its journal write is refused and it stops.
        await eventually(() => logged(env.MCP_TASKS_STEP_LOG, taskId).length > resumed, 5000).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 800));
        const runs = (result['structuredContent'] as { runs: number[] }).runs;
        expect(runs.filter((count) => count === 2).length).toBeLessThanOrEqual(1);
        const final = (await other?.get(taskId)) as Json;
        expect(final['status']).toBe('completed');
        expect(final['result']).toEqual(result);
        // Every step ran at most twice in total: once per runner at the step where the takeover happened.
        const counts = new Map<string, number>();
        for (const id of logged(env.MCP_TASKS_STEP_LOG, taskId)) counts.set(id, (counts.get(id) ?? 0) + 1);
        expect([...counts.values()].filter((count) => count > 1).length).toBeLessThanOrEqual(1);
        expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
      } finally {
        first.child.kill('SIGCONT');
        await first.close();
        await second.close();
      }
    });
  });
}
