import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  HandleStore,
  TaskClient,
  TaskNotSupportedError,
  textOf,
  type DialectPreference,
  type InputContext,
  type TaskOutcome,
} from '../../src/client/index.js';
import { ensureBuilt, startCli } from '../cli/helpers/cli.js';
import { requireTool } from '../helpers/requireTool.js';
import { tempDir } from '../helpers/tmp.js';
import type { RunningServer } from './helpers/everything.js';
import { fixtureCommand, startFixture } from './helpers/fixture.js';
import { expectSingleFinalWord, observe, sleep } from './helpers/observe.js';

/**
 * Interop with our own fixture server (examples/conformance) in each dialect. Tools: greet (forbidden),
 * slow_compute (optional), failing_job (required, isError after ~1 s), protocol_error_job (JSON-RPC error),
 * confirm_delete (one elicitation), multi_input (two elicitations). A dialect the server does not speak (yet) is
 * skipped at run time rather than failed.
 */
const COMMAND = fixtureCommand();
const HAS_FIXTURE = requireTool('the built fixture server', COMMAND !== undefined, 'npm run build');
const EXT = 'io.modelcontextprotocol/tasks';

let server: RunningServer;

beforeAll(async () => {
  if (COMMAND === undefined) return;
  server = await startFixture(COMMAND);
});

afterAll(async () => {
  await server?.stop();
});

/** Fills any form from its schema, so the answers fit whatever the fixture asks. */
function answers(schema: unknown): { action: 'accept'; content: Record<string, string | number | boolean> } {
  const properties = (schema as { properties?: Record<string, { type?: string }> } | undefined)?.properties ?? {};
  const content: Record<string, string | number | boolean> = {};
  for (const [key, field] of Object.entries(properties)) {
    if (field.type === 'boolean') content[key] = true;
    else if (field.type === 'number' || field.type === 'integer') content[key] = 1;
    else content[key] = key === 'color' ? 'teal' : 'Ada';
  }
  return { action: 'accept', content };
}

/** Whether the connected client actually speaks the dialect asked for (the server may not offer it yet). */
async function speaks(client: TaskClient, dialect: DialectPreference): Promise<boolean> {
  if (dialect === '2025-11-25') return client.dialect === '2025-11-25';
  if (dialect === 'ext-2026') {
    const extensions = (client.serverCapabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return extensions?.[EXT] !== undefined;
  }
  const probe = await client.callTool('slow_compute', { seconds: 0.2, label: 'probe' });
  const accepted = await probe.accepted();
  await probe.outcome();
  return accepted;
}

function fixtureSuite(dialect: DialectPreference): void {
  describe.runIf(HAS_FIXTURE)(`fixture server, ${dialect} dialect`, () => {
    let client: TaskClient;
    let supported = false;
    const asked: InputContext[] = [];

    beforeAll(async () => {
      client = await TaskClient.connect(
        { url: server.url },
        {
          dialect,
          elicitation: (params, context) => {
            asked.push(context);
            return answers((params as { requestedSchema?: unknown }).requestedSchema);
          },
        },
      );
      supported = await speaks(client, dialect);
    });

    afterAll(async () => {
      await client?.close();
    });

    it('runs greet (taskSupport forbidden) plainly, and refuses it as a task where the dialect says so', async (context) => {
      if (!supported) context.skip();
      const handle = await client.callTool('greet', { name: 'Bob' });
      expect(handle.isTask).toBe(false);
      expect(textOf(await handle.result())).toBe('Hello, Bob!');
      if (dialect === '2025-11-25') {
        await expect(client.callTool('greet', { name: 'Bob' }, { mode: 'task' })).rejects.toBeInstanceOf(
          TaskNotSupportedError,
        );
      }
    });

    it('runs slow_compute as a task to completion', async (context) => {
      if (!supported) context.skip();
      const handle = await client.callTool('slow_compute', { seconds: 1, label: 'answer' });
      // SEP-1686 names the task first and learns from notifications/tasks/created that it exists.
      expect(await handle.accepted()).toBe(true);
      expect(handle.isTask).toBe(true);
      const seen = observe(handle);
      expect(textOf(await handle.result())).toBe('Computed answer in 1s');
      expect(expectSingleFinalWord(seen)).toBe('completed');
      // The call's progress token stays valid while the task runs (spec R55); tasks on the extension have none (E16).
      if (dialect === '2025-11-25') {
        expect(seen.some((snapshot) => snapshot.progress?.total === 4)).toBe(true);
      }
    });

    it("reports failing_job's tool error as a failure carrying the tool result", async (context) => {
      if (!supported) context.skip();
      const outcome = await (await client.callTool('failing_job')).outcome();
      expect(outcome.status).toBe('failed');
      expect(outcome.status === 'failed' && outcome.result?.isError).toBe(true);
      expect(outcome.status === 'failed' && outcome.message).toContain('The job failed: the input data is corrupt.');
    });

    it("reports protocol_error_job with the server's stored JSON-RPC error", async (context) => {
      if (!supported) context.skip();
      const outcome = await (await client.callTool('protocol_error_job')).outcome();
      expect(outcome).toMatchObject({
        status: 'failed',
        error: { code: -32603, data: { upstream: 'inventory', retryable: false } },
      });
      expect(outcome.status === 'failed' && outcome.message).toContain('the upstream service refused the request');
    });

    it('answers the one elicitation of confirm_delete', async (context) => {
      if (!supported) context.skip();
      const handle = await client.callTool('confirm_delete', { filename: 'notes.txt' });
      expect(textOf(await handle.result())).toBe('Deleted notes.txt');
      expect(asked.at(-1)?.dialect).toBe(dialect);
    });

    it('answers both elicitations of multi_input', async (context) => {
      if (!supported) context.skip();
      const before = asked.length;
      const handle = await client.callTool('multi_input');
      expect(textOf(await handle.result())).toMatch(/^name="Ada" \S+=(true|"teal")$/);
      expect(asked.length - before).toBe(2);
    });

    it('gives the input asked for before the task starts (test_tool_with_task)', async (context) => {
      if (!supported) context.skip();
      const handle = await client.callTool('test_tool_with_task');
      expect(textOf(await handle.result())).toBe('Hello Ada, your task is complete.');
    });

    it('cancels a working task (working → cancelled)', async (context) => {
      if (!supported) context.skip();
      const handle = await client.callTool('slow_compute', { seconds: 30, label: 'long' });
      const seen = observe(handle);
      await sleep(300);
      const outcome = await handle.cancel();
      expect(outcome.status).toBe('cancelled');
      expect(expectSingleFinalWord(seen)).toBe('cancelled');
      expect((await client.getTask(handle.taskId as string)).status).toBe('cancelled');
    });

    it('settles a cancel of an already completed task on completed (-32602 in 2025-11-25)', async (context) => {
      if (!supported) context.skip();
      const first = await client.callTool('slow_compute', { seconds: 0.2, label: 'done' });
      await first.result();
      const again = await client.attach(first.taskId as string, { follow: false });
      const outcome = await again.cancel();
      if (dialect === '2025-11-25') {
        expect(again.cancelAcknowledgement).toMatchObject({ kind: 'rejected', error: { code: -32602 } });
      }
      expect(outcome.status).toBe('completed');
      expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('Computed done in 0.2s');
    });

    it('shows the final word when a cancel races completion', async (context) => {
      if (!supported) context.skip();
      const finals: TaskOutcome['status'][] = [];
      for (const delay of [900, 1000, 1100]) {
        const handle = await client.callTool('slow_compute', { seconds: 1, label: 'race' });
        const seen = observe(handle);
        await sleep(delay);
        const outcome = await handle.cancel();
        expect(outcome.status).toBe(expectSingleFinalWord(seen));
        expect((await client.getTask(handle.taskId as string)).status).toBe(outcome.status);
        finals.push(outcome.status);
      }
      for (const status of finals) expect(['cancelled', 'completed']).toContain(status);
    });

    it('resumes a task after the host process was killed', async (context) => {
      if (!supported) context.skip();
      ensureBuilt();
      const store = join(tempDir(), 'handles.json');
      const host = startCli(
        ['--json', '--dialect', dialect, '--url', server.url, 'call', 'slow_compute', 'seconds=2', 'label=kept'],
        {
          env: { MCP_TASKS_HANDLES: store },
        },
      );
      await host.waitFor((stdout) => stdout.includes('"type":"task"'));
      host.child.kill('SIGKILL');
      await host.done;
      const [record] = await new HandleStore(store).list();
      const resumed = await TaskClient.connect({ url: server.url }, { dialect, store });
      try {
        const [handle] = await resumed.resume();
        expect(handle?.taskId).toBe(record?.taskId);
        expect(textOf(await handle!.result())).toBe('Computed kept in 2s');
      } finally {
        await resumed.close();
      }
    });
  });
}

fixtureSuite('2025-11-25');
fixtureSuite('ext-2026');
fixtureSuite('sep-1686');
