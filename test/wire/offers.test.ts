import { randomUUID } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually, type HttpPeer, type Message } from '../helpers/rawWire.js';
import { logged } from '../helpers/stepLog.js';
import { WORKFLOW_STORES, kill9, onFixture, workflowEnvironment } from '../helpers/workflowWire.js';

type Json = Record<string, unknown>;

const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';
const TOKENS = 'token-a:alice,token-b:bob';
const ALICE = { authorization: 'Bearer token-a' };
const BOB = { authorization: 'Bearer token-b' };
const stopAnswer = (stop: boolean) => ({ action: 'accept', content: { stop } });

/** One wire generation's way of driving `offered_input` as alice, and of answering its offer as alice or bob. */
interface OfferWire {
  create(args: Json): Promise<string>;
  get(taskId: string): Promise<Json>;
  answer(taskId: string, stop: boolean, as?: 'alice' | 'bob'): Promise<void>;
  /** The final result; 2025-11-25 also returns the requests the open tasks/result carried (never answered there). */
  result(taskId: string): Promise<{ result: Json; offered: Message[] }>;
  close(): Promise<void>;
}

const GENERATIONS: Record<string, (fixture: HttpFixture) => Promise<OfferWire>> = {
  '2025-11-25': async (fixture) => {
    const peers: Record<'alice' | 'bob', HttpPeer> = {
      alice: await fixture.peer(ALICE),
      bob: await fixture.peer(BOB),
    };
    for (const peer of Object.values(peers)) await peer.initialize();
    const get = async (taskId: string) => (await peers.alice.request('tasks/get', { taskId })).result as Json;
    return {
      async create(args) {
        const response = await peers.alice.request('tools/call', { name: 'offered_input', arguments: args, task: {} });
        expect(response.error, JSON.stringify(response.error)).toBeUndefined();
        return (response.result?.['task'] as { taskId: string }).taskId;
      },
      get,
      async answer(taskId, stop, as = 'alice') {
        // The response to the request the offer travels in (its id names the task and the key).
        const id = `mcp-tasks-input:${taskId}:stop`;
        const before = (await get(taskId))['lastUpdatedAt'];
        await peers[as].sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: stopAnswer(stop) }));
        // A response is acknowledged before it is recorded: an answer that counts shows as a write to the task.
        if (as === 'alice') await eventually(async () => (await get(taskId))['lastUpdatedAt'] !== before);
      },
      async result(taskId) {
        const offered: Message[] = [];
        peers.alice.onServerRequest = (request) => {
          offered.push(request);
          return new Promise(() => {});
        };
        try {
          return { result: (await peers.alice.request('tasks/result', { taskId })).result as Json, offered };
        } finally {
          peers.alice.onServerRequest = undefined;
        }
      },
      close: async () => {
        for (const peer of Object.values(peers)) await peer.close();
      },
    };
  },
  'tasks extension': async (fixture) => {
    const peers = { alice: new ModernPeer(fixture.url, ALICE), bob: new ModernPeer(fixture.url, BOB) };
    const get = async (taskId: string) => (await peers.alice.request('tasks/get', { taskId })).result as Json;
    return {
      async create(args) {
        const response = await peers.alice.request('tools/call', { name: 'offered_input', arguments: args });
        expect(response.result?.['resultType']).toBe('task');
        return response.result?.['taskId'] as string;
      },
      get,
      async answer(taskId, stop, as = 'alice') {
        const update = await peers[as].request('tasks/update', { taskId, inputResponses: { stop: stopAnswer(stop) } });
        // Another owner's task answers like a missing one.
        if (as === 'bob') expect(update.error?.code).toBe(-32602);
        else expect(update.error).toBeUndefined();
      },
      async result(taskId) {
        const done = await eventually(async () => {
          const task = await get(taskId);
          // The offer never shows as an input request: the task is working, not input_required.
          if (task['status'] === 'working') expect(task['inputRequests']).toBeUndefined();
          return ['completed', 'failed', 'cancelled'].includes(task['status'] as string) ? task : undefined;
        }, 60_000);
        expect(done['status'], JSON.stringify(done)).toBe('completed');
        return { result: done['result'] as Json, offered: [] };
      },
      close: async () => {},
    };
  },
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const [storeName, spec] of WORKFLOW_STORES) {
  const suite = spec ? describe : describe.skip;
  suite(`standing offers (offered_input) over HTTP on ${storeName}`, () => {
    const environment = () => workflowEnvironment(spec as string, { MCP_TASKS_TEST_TOKENS: TOKENS });

    for (const [generation, connect] of Object.entries(GENERATIONS)) {
      const onServer = (env: Record<string, string>, body: (wire: OfferWire) => Promise<void>) =>
        onFixture(env, connect, body);
      /** Resolves once round `round` has run and the task has had time to park in the sleep after it. */
      const sleepingIn = async (env: ReturnType<typeof environment>, taskId: string, round: number) => {
        await eventually(() => logged(env.MCP_TASKS_STEP_LOG, taskId).includes(`round-${round}`), 20_000);
        await pause(400);
      };

      describe(generation, () => {
        it('an answer cuts the running sleep short and stops the loop; another owner’s answer does nothing', async () => {
          const env = environment();
          await onServer(env, async (wire) => {
            const created = Date.now();
            const taskId = await wire.create({ rounds: 3, roundMs: 10_000, label: 'halt' });
            await sleepingIn(env, taskId, 0);
            expect((await wire.get(taskId))['status']).toBe('working');
            await wire.answer(taskId, true, 'bob');
            // Had bob's answer counted, the sleep would have ended and the task finished by now.
            await pause(1500);
            expect((await wire.get(taskId))['status']).toBe('working');
            await wire.answer(taskId, true);
            const { result } = await wire.result(taskId);
            expect(result['structuredContent']).toEqual({ rounds: 1, stoppedEarly: true });
            expect(JSON.stringify(result['content'])).toContain('halt');
            // Well before the first ten-second sleep would have ended, let alone all three.
            expect(Date.now() - created).toBeLessThan(9000);
            expect(logged(env.MCP_TASKS_STEP_LOG, taskId)).toEqual(['round-0']);
          });
        });

        it('takes the first answer only: a later one to the same key is ignored', async () => {
          const env = environment();
          await onServer(env, async (wire) => {
            const taskId = await wire.create({ rounds: 3, roundMs: 1500, label: 'first' });
            await sleepingIn(env, taskId, 0);
            await wire.answer(taskId, false);
            // The answer cut the first sleep short; the loop goes on, since it said not to stop.
            await eventually(() => logged(env.MCP_TASKS_STEP_LOG, taskId).includes('round-1'), 5000);
            expect((await wire.get(taskId))['status']).toBe('working');
            await wire.answer(taskId, true);
            const { result } = await wire.result(taskId);
            expect(result['structuredContent']).toEqual({ rounds: 3, stoppedEarly: false });
          });
        });

        it('an unanswered offer lets the task run every round, working throughout', async () => {
          const env = environment();
          await onServer(env, async (wire) => {
            const taskId = await wire.create({ rounds: 2, roundMs: 600, label: 'quiet' });
            const statuses = new Set<string>();
            const watching = (async () => {
              for (let i = 0; i < 8; i++) {
                statuses.add((await wire.get(taskId))['status'] as string);
                await pause(100);
              }
            })();
            const { result, offered } = await wire.result(taskId);
            await watching;
            expect(result['structuredContent']).toEqual({ rounds: 2, stoppedEarly: false });
            statuses.delete('completed');
            expect([...statuses]).toEqual(['working']);
            if (generation === '2025-11-25') {
              // The offer reached the requestor once on the open tasks/result, with the task it belongs to.
              expect(offered.map((request) => request.method)).toEqual(['elicitation/create']);
              const params = offered[0]?.params as Json;
              expect(params['message']).toBe('Stop quiet?');
              expect((params['_meta'] as Json)['io.modelcontextprotocol/related-task']).toEqual({ taskId });
              expect(offered[0]?.id).toBe(`mcp-tasks-input:${taskId}:stop`);
            }
          });
        });

        it('an answer given while parked in the sleep survives a kill -9 and a restart', async () => {
          const env = environment();
          const first = await HttpFixture.start({ env });
          let sleeping = 0;
          const taskId = await (async () => {
            const wire = await connect(first);
            const id = await wire.create({ rounds: 3, roundMs: 30_000, label: 'crash' });
            await sleepingIn(env, id, 0);
            sleeping = Date.now();
            await wire.answer(id, true);
            return id;
          })();
          await kill9(first);
          await onServer(env, async (wire) => {
            const { result } = await wire.result(taskId);
            // Lost, the answer would leave three full rounds; kept but not waking the task, the first sleep.
            expect(result['structuredContent']).toEqual({ rounds: 1, stoppedEarly: true });
            expect(Date.now() - sleeping).toBeLessThan(25_000);
          });
        });
      });
    }

    it('SEP-1686: the offer arrives on the original request’s stream and its response stops the loop early', async () => {
      const env = environment();
      const fixture = await HttpFixture.start({ env });
      const peer = await fixture.peer(ALICE);
      try {
        await peer.initialize();
        await peer.openNotificationStream();
        const offered: Message[] = [];
        let answer: (() => void) | undefined;
        peer.onServerRequest = (request) => {
          offered.push(request);
          return new Promise((resolve) => (answer = () => resolve(stopAnswer(true))));
        };
        const taskId = randomUUID();
        const started = Date.now();
        const done = peer.request('tools/call', {
          name: 'offered_input',
          arguments: { rounds: 3, roundMs: 10_000, label: 'sep' },
          _meta: { [SEP_TASK]: { taskId } },
        });
        await eventually(() => offered.length === 1);
        expect(offered[0]?.method).toBe('elicitation/create');
        const params = offered[0]?.params as Json;
        expect(params['message']).toBe('Stop sep?');
        expect((params['_meta'] as Json)[SEP_RELATED]).toEqual({ taskId });
        // Into the first ten-second sleep (the step log is keyed by the engine's id, not the requestor's).
        await pause(800);
        const task = await peer.request('tasks/get', { taskId, _meta: { [SEP_RELATED]: { taskId } } });
        expect(task.result?.['status']).toBe('working');
        answer?.();
        const response = await done;
        expect(response.result?.['structuredContent']).toEqual({ rounds: 1, stoppedEarly: true });
        expect(Date.now() - started).toBeLessThan(9000);
        expect(offered).toHaveLength(1);
      } finally {
        peer.onServerRequest = undefined;
        await peer.close();
        await fixture.close();
      }
    });
  });
}
