// npm run bench:steps — the cost of a journaled step against calling its closure directly (memory, SQLite), steps/s
// for one task and for 100 concurrent tasks, and the closure runs repeated per kill -9 of a server mid-workflow.
// Goals: a journaled step on SQLite costs <= 1 ms at p50; <= 1 repeated closure per crash.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { ServerContext } from '@modelcontextprotocol/server';

import { TaskEngine, type TaskStore, type TaskWork } from '../src/engine/index.js';
import { InProcessExecutor } from '../src/executors/index.js';
import { MemoryStore } from '../src/stores/memory/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { journaledWork, withSteps, type WorkflowHandler } from '../src/workflow/index.js';
import { fmt, percentile } from './measure.js';
import { kill9, startFixture } from './fixtureProcess.js';

const request = { method: 'tools/call', params: { name: 'bench', arguments: {} } };

/** Runs `handler` as a task's tool would run, without an MCP server in between (its cost is not the subject). */
function toolWork(handler: WorkflowHandler<Record<string, unknown>>): TaskWork {
  const tool = withSteps(handler);
  return async ({ task, signal }) => {
    const params = task.request.params as { arguments: Record<string, unknown>; _meta: Record<string, unknown> };
    const ctx = { mcpReq: { _meta: params._meta, signal } } as unknown as ServerContext;
    return { kind: 'result', result: (await tool(params.arguments, ctx)) as Record<string, unknown> };
  };
}

async function withEngine<T>(
  store: TaskStore,
  handler: WorkflowHandler<Record<string, unknown>>,
  concurrency: number,
  body: (engine: TaskEngine) => Promise<T>,
): Promise<T> {
  const engine = new TaskEngine({
    store,
    sweepIntervalMs: 0,
    recoveryIntervalMs: 0,
    limits: { maxActivePerOwner: 1000 },
  });
  const executor = new InProcessExecutor({ engine, work: journaledWork(engine, toolWork(handler)), concurrency });
  engine.setExecutor(executor);
  await engine.start();
  try {
    return await body(engine);
  } finally {
    await executor.close();
    await engine.close();
  }
}

const closure = (i: number) => ({ i, squared: i * i });

/** Per-step latency of `step.do` with a trivial closure, and of the closure called directly. */
async function stepCost(store: TaskStore, steps: number): Promise<{ journaled: number[]; direct: number[] }> {
  const journaled: number[] = [];
  const direct: number[] = [];
  await withEngine(
    store,
    async (_args, step) => {
      for (let i = 0; i < steps; i++) {
        const start = performance.now();
        await step.do(`s${i}`, () => closure(i));
        journaled.push(performance.now() - start);
        const before = performance.now();
        await Promise.resolve(closure(i));
        direct.push(performance.now() - before);
      }
      return { content: [] };
    },
    1,
    async (engine) => {
      const { task } = await engine.create({ owner: 'o', request, dialect: 'bench' });
      await engine.waitForTerminal(task.taskId);
    },
  );
  return { journaled: journaled.slice(50), direct: direct.slice(50) };
}

/** Steps per second over `tasks` concurrent tasks of `steps` steps each. */
async function throughput(store: TaskStore, tasks: number, steps: number): Promise<number> {
  return withEngine(
    store,
    async (_args, step) => {
      for (let i = 0; i < steps; i++) await step.do(`s${i}`, () => closure(i));
      return { content: [] };
    },
    tasks,
    async (engine) => {
      const start = performance.now();
      const created = await Promise.all(
        Array.from({ length: tasks }, () => engine.create({ owner: 'o', request, dialect: 'bench' })),
      );
      await Promise.all(created.map(({ task }) => engine.waitForTerminal(task.taskId)));
      return ((tasks * steps) / (performance.now() - start)) * 1000;
    },
  );
}

/** Kills the server `kills` times at random moments of one journaled_steps task; closure runs repeated per crash. */
async function crashes(kills: number, steps: number, stepMs: number): Promise<{ repeated: number; kills: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-steps-'));
  const env = {
    MCP_TASKS_STORE: join(dir, 'steps.db'),
    MCP_TASKS_STEP_LOG: join(dir, 'steps.log'),
    MCP_TASKS_LEASE_MS: '300',
  };
  let server = await startFixture(env);
  const created = await server.call('tools/call', {
    name: 'journaled_steps',
    arguments: { steps, stepMs, label: 'b' },
  });
  const taskId = created['taskId'] as string;
  const linesOf = () =>
    existsSync(env.MCP_TASKS_STEP_LOG)
      ? readFileSync(env.MCP_TASKS_STEP_LOG, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith(taskId))
      : [];
  let done = 0;
  for (let kill = 0; kill < kills; kill++) {
    // Let the run make progress, then kill -9 at a random moment inside or between steps.
    const target = Math.min(steps - 1, Math.round(((kill + 1) * steps) / (kills + 1)));
    while ((await new Promise((r) => setTimeout(r, 5)), linesOf().length) < target);
    await new Promise((r) => setTimeout(r, Math.random() * stepMs));
    await kill9(server.child);
    done += 1;
    server = await startFixture(env);
  }
  let result: Record<string, unknown> | undefined;
  while (!result) {
    const task = await server.call('tasks/get', { taskId });
    if (task['status'] === 'completed') result = task['result'] as Record<string, unknown>;
    else if (task['status'] !== 'working') throw new Error(`the task ended ${String(task['status'])}`);
    else await new Promise((r) => setTimeout(r, 100));
  }
  server.child.kill('SIGTERM');
  const runs = (result['structuredContent'] as { runs: number[] }).runs;
  rmSync(dir, { recursive: true, force: true });
  return { repeated: runs.reduce((a, b) => a + b, 0) - steps, kills: done };
}

const line = (label: string, sample: number[]) =>
  `${label}: p50 ${fmt(percentile(sample, 50), 3)} ms, p99 ${fmt(percentile(sample, 99), 3)} ms`;

const dir = mkdtempSync(join(tmpdir(), 'bench-steps-'));
const sqlite = (name: string, durability: 'full' | 'normal' = 'full') =>
  new SqliteStore({ path: join(dir, `${name}.db`), durability });

const only = process.argv[2];
if (only !== 'crash') {
  console.log('Journaled step vs the closure called directly (1,000 steps, one task):');
  for (const [name, store] of [
    ['memory', new MemoryStore()],
    ['SQLite (durability full)', sqlite('cost-full')],
    ['SQLite (durability normal)', sqlite('cost-normal', 'normal')],
  ] as const) {
    const { journaled, direct } = await stepCost(store, 1050);
    const ratio = percentile(journaled, 50) / Math.max(percentile(direct, 50), 1e-6);
    console.log(`  ${name}: ${line('journaled', journaled)}; ${line('direct', direct)}; p50 ratio ${fmt(ratio, 0)}x`);
  }

  console.log('Steps per second (trivial closures):');
  for (const [name, make] of [
    ['memory', () => new MemoryStore()],
    ['SQLite (full)', () => sqlite(`tp-${Math.random()}`)],
  ] as const) {
    const one = await throughput(make(), 1, 2000);
    const hundred = await throughput(make(), 100, 50);
    console.log(
      `  ${name}: one task ${fmt(one)}/s; 100 concurrent tasks ${fmt(hundred)}/s (ratio ${fmt(hundred / one, 2)})`,
    );
  }
}

// Two kills per task: a task that made no progress between them would still be re-run (the default policy gives up
// after 3 runs in a row lost without a new step).
let repeated = 0;
let kills = 0;
for (let trial = 0; trial < 3; trial++) {
  const crash = await crashes(2, 30, 60);
  repeated += crash.repeated;
  kills += crash.kills;
}
console.log(
  `kill -9 of the server ${kills} times (3 tasks of 30 steps, 2 kills each): ${repeated} closure runs repeated, ` +
    `${fmt(repeated / kills, 2)} per crash (goal <= 1)`,
);
rmSync(dir, { recursive: true, force: true });
