// Issue point 3, with real processes: two fixture servers (MCP_TASKS_EXECUTOR=queue) and two fixture workers on one
// shared store and one BullMQ queue. A task created through instance A is polled, fetched, answered and cancelled
// through instance B, in every dialect (SEP-1686 carries input and cancellation on the original request, so those go
// through A there); cancellation reaches the tool running on a worker as an abort.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type HttpPeer } from '../helpers/rawWire.js';
import { isolatedQueue, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { DIALECTS, ext2026, modernRequest } from './dialects.js';
import { backends, redisUrl, sleep, unique } from './suites.js';

const LEASE_MS = 3000;

if (redisUrl) {
  const queueRedis = redisUrl;
  for (const [storeName, openBackend] of backends(1, { sqlite: true })) {
    describe(`no sticky routing: 2 servers and 2 workers on the ${storeName} store`, () => {
      let backend: StoreBackend;
      let queue: ReturnType<typeof isolatedQueue>;
      let cluster: Cluster;
      // Without cross-process events (SQLite) waiters notice changes at the engine's 5 s re-check instead.
      let wakeBoundMs = 1000;

      beforeAll(async () => {
        backend = await openBackend();
        queue = isolatedQueue(queueRedis);
        wakeBoundMs = backend.crossProcessEvents ? 1000 : 6000;
        cluster = await Cluster.start({
          store: backend.spec,
          redisUrl: queueRedis,
          queue: queue.name,
          env: { MCP_TASKS_LEASE_MS: String(LEASE_MS) },
        });
      });
      afterAll(async () => {
        await cluster?.close();
        await queue?.dispose();
        await backend?.dispose();
      });

      for (const dialect of DIALECTS) {
        describe(`${dialect.name} dialect`, () => {
          let a: HttpPeer;
          let b: HttpPeer;

          beforeAll(async () => {
            a = await cluster.peer(0);
            b = await cluster.peer(1);
            await dialect.initialize(a);
            await dialect.initialize(b);
          });

          it('runs a task created on A in a worker process, and B polls it to completion', async () => {
            const label = unique('poll');
            const taskId = await dialect.create(a, 'slow_compute', { seconds: 2, label });
            expect((await dialect.get(b, taskId)).status).toBe('working');
            const started = await eventually(() => cluster.toolEventsFor(label).find((e) => e.event === 'start'));
            // The tool ran in a worker's process, not in either server.
            const runner = cluster.workerWithPid(started.pid);
            expect(runner?.logs.some((line) => line.message === 'task started')).toBe(true);
            expect(cluster.servers.map((server) => server.child.pid)).not.toContain(started.pid);
            const done = await eventually(async () => {
              const view = await dialect.get(b, taskId);
              return view.status === 'completed' ? view : undefined;
            }, 15_000);
            expect(done.taskId).toBe(taskId);
            if (dialect.list) expect(await dialect.list(b)).toContain(taskId);
          });

          it('has the outcome on B as soon as the worker finishes (a tasks/result waiting on B wakes)', async () => {
            const label = unique('result');
            const taskId = await dialect.create(a, 'slow_compute', { seconds: 1.5, label });
            const outcome = await dialect.result(b, taskId);
            const returnedAt = Date.now();
            expect(outcome.content).toEqual([{ type: 'text', text: `Computed ${label} in 1.5s` }]);
            const ended = cluster.toolEventsFor(label).find((e) => e.event === 'end');
            expect(ended).toBeDefined();
            // Woken by the store's event, not by a poll interval.
            expect(returnedAt - (ended?.time ?? 0)).toBeLessThan(wakeBoundMs);
          });

          const inputVia = dialect.routing.input === 'any' ? 'B' : 'A (the original request)';
          it(`delivers input the tool requests on a worker through ${inputVia}, and feeds the answer back to the tool`, async () => {
            const filename = `${unique('file')}.txt`;
            const taskId = await dialect.create(a, 'confirm_delete', { filename });
            await eventually(async () => (await dialect.get(b, taskId)).status === 'input_required', 15_000);
            const { outcome, requests } = await dialect.answerInput(
              dialect.routing.input === 'any' ? b : a,
              taskId,
              () => ({
                action: 'accept',
                content: { confirm: true },
              }),
            );
            expect(requests).toHaveLength(1);
            expect(requests[0]?.method).toBe('elicitation/create');
            expect(requests[0]?.params?.['message']).toBe(`Delete ${filename}?`);
            expect(outcome.content).toEqual([{ type: 'text', text: `Deleted ${filename}` }]);
            expect((await dialect.get(a, taskId)).status).toBe('completed');
          });

          const cancelVia = dialect.routing.cancel === 'any' ? 'B' : 'A (the original request)';
          it(`cancels through ${cancelVia}: the tool running on a worker sees the abort, and the task stays cancelled`, async () => {
            const label = unique('cancel');
            const taskId = await dialect.create(a, 'slow_compute', { seconds: 30, label });
            const started = await eventually(() => cluster.toolEventsFor(label).find((e) => e.event === 'start'));
            const runner = cluster.workerWithPid(started.pid);
            const cancelledAt = Date.now();
            expect((await dialect.cancel(dialect.routing.cancel === 'any' ? b : a, taskId)).status).toBe('cancelled');
            const aborted = await eventually(() => cluster.toolEventsFor(label).find((e) => e.event === 'abort'));
            // The abort reached the tool's own AbortSignal in the process that ran it.
            expect(aborted.pid).toBe(started.pid);
            expect(aborted.time - cancelledAt).toBeLessThan(backend.crossProcessEvents ? 1000 : LEASE_MS);
            await eventually(() =>
              runner?.logs.some(
                (line) => line.message === 'task run aborted' && line['reason'] === 'the task is cancelled',
              ),
            );
            await sleep(500);
            expect((await dialect.get(a, taskId)).status).toBe('cancelled');
            expect(cluster.toolEventsFor(label).filter((e) => e.event === 'end')).toHaveLength(0);
            const outcome = await dialect.result(a, taskId);
            expect(outcome.isError === true || outcome.error !== undefined || outcome.cancelled === true).toBe(true);
          });
        });
      }

      it('ext-2026: a multi-round-trip tool asks on a worker, is answered through B, and its next round runs on a worker', async () => {
        const a = await cluster.peer(0);
        const b = await cluster.peer(1);
        const tool = 'test_tool_with_task';
        const answer = { action: 'accept', content: { name: 'Ada' } };
        const first = (await modernRequest(a, 'tools/call', { name: tool, arguments: {} }, tool)).result ?? {};
        let taskId: string;
        if (first['resultType'] === 'input_required') {
          // The first round asked within the synchronous window: the next call, with the answer, goes to B.
          const second =
            (
              await modernRequest(
                b,
                'tools/call',
                {
                  name: tool,
                  arguments: {},
                  inputResponses: { user_name: answer },
                  ...(typeof first['requestState'] === 'string' && { requestState: first['requestState'] }),
                },
                tool,
              )
            ).result ?? {};
          expect(second['resultType']).toBe('task');
          taskId = second['taskId'] as string;
        } else {
          // The first round became a task that suspended on a worker; B takes the answer and queues the next round.
          expect(first['resultType']).toBe('task');
          taskId = first['taskId'] as string;
          const asking = await eventually(async () => {
            const task = (await modernRequest(b, 'tasks/get', { taskId }, taskId)).result ?? {};
            return task['status'] === 'input_required' ? task : undefined;
          }, 15_000);
          const [key] = Object.keys(asking['inputRequests'] as object);
          const update = await modernRequest(
            b,
            'tasks/update',
            { taskId, inputResponses: { [key as string]: answer } },
            taskId,
          );
          expect(update.error).toBeUndefined();
        }
        const outcome = await ext2026.result(b, taskId);
        expect(outcome.content).toEqual([{ type: 'text', text: 'Hello Ada, your task is complete.' }]);
        const rounds = cluster.readToolEvents().filter((e) => e.tool === tool && e.event === 'start');
        // Both rounds ran on workers.
        expect(rounds.length).toBeGreaterThanOrEqual(2);
        for (const round of rounds) expect(cluster.workers.map((worker) => worker.pid)).toContain(round.pid);
      });
    });
  }
}
