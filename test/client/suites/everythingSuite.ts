import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  TaskCancelledError,
  TaskClient,
  TaskNotSupportedError,
  textOf,
  type InputContext,
  type TaskTarget,
} from '../../../src/client/index.js';
import { expectSingleFinalWord, observe, sleep } from '../helpers/observe.js';

/**
 * The requestor against server-everything, a real 2025-11-25 task server: its `simulate-research-query` tool is
 * `taskSupport: required`, runs four one-second stages, and elicits a clarification when `ambiguous` is set.
 */
export function everythingSuite(
  name: string,
  start: () => Promise<{ target: TaskTarget; stop(): Promise<void> }>,
): void {
  describe(`server-everything over ${name}`, () => {
    let target: TaskTarget;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      ({ target, stop } = await start());
    });

    afterAll(async () => {
      await stop();
    });

    it('detects the 2025-11-25 dialect and runs a required tool as a task to completion', async () => {
      const client = await TaskClient.connect(target);
      try {
        expect(client.dialect).toBe('2025-11-25');
        expect(client.protocolEra).toBe('legacy');
        const handle = await client.callTool('simulate-research-query', { topic: 'tides' });
        expect(handle.isTask).toBe(true);
        expect(handle.taskId).toMatch(/\S+/);
        const seen = observe(handle);
        const result = await handle.result();
        expect(textOf(result)).toContain('# Research Report: tides');
        expect(expectSingleFinalWord(seen)).toBe('completed');
        expect(seen.map((snapshot) => snapshot.statusMessage)).toContain('Generating report...');
        // The server suggests 1000 ms between polls; the snapshot carries it for the handle to honour.
        expect(seen[0]?.pollIntervalMs).toBe(1000);
      } finally {
        await client.close();
      }
    });

    it('answers a mid-task elicitation through the host handler, via tasks/result', async () => {
      const asked: Array<{ message: unknown; context: InputContext }> = [];
      const client = await TaskClient.connect(target, {
        elicitation: (params, context) => {
          asked.push({ message: params.message, context });
          return { action: 'accept', content: { interpretation: 'snake' } };
        },
      });
      try {
        const handle = await client.callTool('simulate-research-query', { topic: 'python', ambiguous: true });
        const seen = observe(handle);
        const result = await handle.result();
        expect(asked).toHaveLength(1);
        expect(String(asked[0]?.message)).toContain('python');
        // The request named the task it belongs to (related-task _meta, spec R38).
        expect(asked[0]?.context).toMatchObject({ taskId: handle.taskId, dialect: '2025-11-25' });
        expect(seen.map((snapshot) => snapshot.status)).toContain('input_required');
        expect(textOf(result)).toContain('python (snake)');
      } finally {
        await client.close();
      }
    });

    it('runs a tool without taskSupport as a plain call', async () => {
      const client = await TaskClient.connect(target);
      try {
        const handle = await client.callTool('echo', { message: 'hello' });
        expect(handle.isTask).toBe(false);
        expect(handle.taskId).toBeUndefined();
        expect(textOf(await handle.result())).toBe('Echo: hello');
      } finally {
        await client.close();
      }
    });

    it('refuses to make a task the server does not allow, and refuses to call a required tool plainly', async () => {
      const client = await TaskClient.connect(target);
      try {
        await expect(client.callTool('echo', { message: 'x' }, { mode: 'task' })).rejects.toBeInstanceOf(
          TaskNotSupportedError,
        );
        await expect(
          client.callTool('simulate-research-query', { topic: 'x' }, { mode: 'plain' }),
        ).rejects.toMatchObject({
          feature: 'taskSupport',
        });
      } finally {
        await client.close();
      }
    });

    it('cancels a working task: tasks/cancel, then the final word from tasks/get', async () => {
      const client = await TaskClient.connect(target);
      try {
        const handle = await client.callTool('simulate-research-query', { topic: 'glaciers' });
        const seen = observe(handle);
        await sleep(1200);
        const outcome = await handle.cancel();
        expect(outcome.status).toBe('cancelled');
        expect(handle.cancelAcknowledgement?.kind).toBe('accepted');
        expect(seen.some((snapshot) => snapshot.cancelRequested === true && snapshot.status === 'working')).toBe(true);
        expect(expectSingleFinalWord(seen)).toBe('cancelled');
        await expect(handle.result()).rejects.toBeInstanceOf(TaskCancelledError);
        // The server agrees, and the task stays cancelled while the work would have finished (spec R51).
        await sleep(3500);
        expect((await client.getTask(handle.taskId as string)).status).toBe('cancelled');
      } finally {
        await client.close();
      }
    });

    it('treats -32602 for an already completed task as the answer, not an error', async () => {
      const client = await TaskClient.connect(target);
      try {
        const first = await client.callTool('simulate-research-query', { topic: 'comets' });
        await first.result();
        const outcome = await client.cancelTask(first.taskId as string);
        expect(outcome.status).toBe('completed');
        expect(outcome.status === 'completed' && textOf(outcome.result)).toContain('comets');
        const again = await client.attach(first.taskId as string, { follow: false });
        const repeat = await again.cancel();
        expect(again.cancelAcknowledgement).toMatchObject({ kind: 'rejected', error: { code: -32602 } });
        expect(repeat.status).toBe('completed');
      } finally {
        await client.close();
      }
    });

    it('settles a cancel that races completion on whatever the server finally says', async () => {
      const client = await TaskClient.connect(target);
      try {
        const statuses = new Set<string>();
        // Four one-second stages: cancelling around the fourth second lands on either side of completion.
        for (const delay of [3700, 3950, 4200]) {
          const handle = await client.callTool('simulate-research-query', { topic: `race ${delay}` });
          const seen = observe(handle);
          await sleep(delay);
          const outcome = await handle.cancel();
          const final = expectSingleFinalWord(seen);
          expect(outcome.status).toBe(final);
          expect(['cancelled', 'completed']).toContain(final);
          expect((await client.getTask(handle.taskId as string)).status).toBe(final);
          if (final === 'completed') {
            expect(outcome.status === 'completed' && textOf(outcome.result)).toContain(`race ${delay}`);
          }
          statuses.add(final);
        }
        expect(statuses.size).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
    });

    it('lists the tasks of this client with tasks/list', async () => {
      const client = await TaskClient.connect(target);
      try {
        const handle = await client.callTool('simulate-research-query', { topic: 'lists' });
        const list = await client.listTasks();
        expect(list.source).toBe('server');
        expect(list.tasks.map((task) => task.taskId)).toContain(handle.taskId);
        await handle.cancel();
      } finally {
        await client.close();
      }
    });

    it('hosts task-augmented elicitation and sampling for the server (client-hosted tasks)', async () => {
      const client = await TaskClient.connect(target, {
        elicitation: async () => {
          await sleep(1500);
          return { action: 'accept', content: { name: 'Ada', color: 'blue', agreeToTerms: true } };
        },
        sampling: async () => {
          await sleep(1200);
          return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled later' } };
        },
      });
      try {
        const tools = (await client.listTools()).map((tool) => tool.name);
        expect(tools).toContain('trigger-elicitation-request-async');
        expect(tools).toContain('trigger-sampling-request-async');
        const elicited = textOf(await (await client.callTool('trigger-elicitation-request-async')).result());
        expect(elicited).toContain('[COMPLETED]');
        expect(elicited).toContain('Ada');
        const sampled = textOf(
          await (await client.callTool('trigger-sampling-request-async', { prompt: 'hi', maxTokens: 5 })).result(),
        );
        expect(sampled).toContain('[COMPLETED]');
        expect(sampled).toContain('sampled later');
      } finally {
        await client.close();
      }
    });
  });
}
