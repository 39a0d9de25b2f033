// Crash recovery of durable workflow tasks counts only runs lost without progress (src/engine/core/RecoveryPolicy.ts): a
// real fixture server on SQLite, killed with SIGKILL again and again, restarted on the same file.
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually } from '../helpers/rawWire.js';
import { logged } from '../helpers/stepLog.js';
import { tempDir } from '../helpers/tmp.js';

type Json = Record<string, unknown>;

function environment() {
  const dir = tempDir();
  return {
    MCP_TASKS_STORE: join(dir, 'workflow.db'),
    MCP_TASKS_STEP_LOG: join(dir, 'steps.log'),
    MCP_TASKS_LEASE_MS: '500',
  };
}

async function kill9(fixture: HttpFixture): Promise<void> {
  const exited = new Promise((resolve) => fixture.child.once('exit', resolve));
  fixture.child.kill('SIGKILL');
  await exited;
}

/** Creates a task on the 2026 extension's wire and returns its id. */
async function create(fixture: HttpFixture, args: Json): Promise<string> {
  const response = await new ModernPeer(fixture.url).request('tools/call', {
    name: 'journaled_steps',
    arguments: args,
  });
  expect(response.result?.['resultType']).toBe('task');
  return response.result?.['taskId'] as string;
}

/** The task once it is terminal, read on `fixture`. */
function finished(fixture: HttpFixture, taskId: string): Promise<Json> {
  const peer = new ModernPeer(fixture.url);
  return eventually(async () => {
    const task = (await peer.request('tasks/get', { taskId })).result as Json;
    return ['completed', 'failed', 'cancelled'].includes(task['status'] as string) ? task : undefined;
  }, 30_000);
}

const distinctSteps = (log: string, taskId: string) => new Set(logged(log, taskId)).size;

/**
 * Creates a journaled_steps task with `args`, then `kills` times waits for `beforeKill` and kills the server with
 * SIGKILL, restarting it on the same file; returns the task once terminal on the last server.
 */
async function crashLoop(
  args: Json,
  kills: number,
  beforeKill: (log: string, taskId: string, kill: number) => Promise<unknown>,
): Promise<{ log: string; taskId: string; done: Json }> {
  const env = environment();
  let fixture = await HttpFixture.start({ env });
  try {
    const taskId = await create(fixture, args);
    for (let kill = 1; kill <= kills; kill++) {
      await beforeKill(env.MCP_TASKS_STEP_LOG, taskId, kill);
      await kill9(fixture);
      fixture = await HttpFixture.start({ env });
    }
    return { log: env.MCP_TASKS_STEP_LOG, taskId, done: await finished(fixture, taskId) };
  } finally {
    await fixture.close();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('crash recovery of a workflow task on SQLite', () => {
  it('a workflow killed -9 five times, each time after completing a new step, still completes', async () => {
    const { done } = await crashLoop({ steps: 7, stepMs: 400, label: 'marathon' }, 5, async (log, taskId, kill) => {
      // This run completes one more step (logged, then journaled a moment later), and dies inside the next one.
      await eventually(() => distinctSteps(log, taskId) >= kill, 15_000);
      await pause(100);
    });
    expect(done['status'], JSON.stringify(done)).toBe('completed');
    const runs = ((done['result'] as Json)['structuredContent'] as { runs: number[] }).runs;
    expect(runs).toHaveLength(7);
    // Each kill hit a step in flight, which ran again; no step ran more than twice.
    expect(runs.every((count) => count === 1 || count === 2)).toBe(true);
  });

  it('a workflow whose runs keep dying inside the same step fails at the third lost run', async () => {
    // Step 0 takes longer than each server lives: no lost run completes a step.
    const { log, taskId, done } = await crashLoop({ steps: 2, stepMs: 30_000, label: 'stuck' }, 3, () => pause(700));
    expect(done['status']).toBe('failed');
    expect(done['statusMessage']).toBe(
      'The runner of this task stopped renewing its lease 3 times; giving up after 3 runs.',
    );
    expect(logged(log, taskId)).toEqual([]);
  });
});
