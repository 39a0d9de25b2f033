import { appendFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { withSteps, type Step } from 'mcp-tasks/workflow';
import { sleep } from '../shared/sleep.js';
import { object, type FixtureArgs, type FixtureTool } from './FixtureTool.js';

let defaultLog: string | undefined;

/** The file every step closure appends `<taskId> <step>` to: MCP_TASKS_STEP_LOG, or a temporary file. */
function stepLog(): string {
  const configured = process.env['MCP_TASKS_STEP_LOG'];
  if (configured) return configured;
  defaultLog ??= join(mkdtempSync(join(tmpdir(), 'mcp-tasks-steps-')), 'steps.log');
  return defaultLog;
}

/** Appends one line synchronously, so a kill -9 right after the closure returns cannot lose it. */
function logRun(step: Step, id: string): void {
  appendFileSync(stepLog(), `${step.taskId ?? 'direct'} ${id}\n`);
}

/** The ids this task's closures logged, in order. */
function loggedIds(step: Step): string[] {
  const log = stepLog();
  if (!existsSync(log)) return [];
  const prefix = `${step.taskId ?? 'direct'} `;
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

/** How many times each closure ran for this task, by the id it logged. */
function runsOf(step: Step): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of loggedIds(step)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

const int = (args: FixtureArgs, name: string, fallback: number, max: number): number =>
  Math.max(0, Math.min(max, Math.floor(Number(args[name] ?? fallback)) || 0));

const WORKFLOW_POLICY = { taskSupport: 'optional', pollIntervalMs: 100, retrySafe: true } as const;

/** Durable workflow tools: journaled steps, a durable sleep and a journaled question (the step API of src/workflow). */
export const FIXTURE_WORKFLOW_TOOLS: Record<string, FixtureTool> = {
  journaled_steps: {
    description:
      'Runs `steps` journaled steps; each sleeps `stepMs` and appends "<taskId> <step>" to $MCP_TASKS_STEP_LOG.',
    inputSchema: object(
      { steps: { type: 'integer', minimum: 0 }, stepMs: { type: 'integer', minimum: 0 }, label: { type: 'string' } },
      ['steps'],
    ),
    policy: WORKFLOW_POLICY,
    run: withSteps(async (args: FixtureArgs, step) => {
      const steps = int(args, 'steps', 3, 1000);
      const stepMs = int(args, 'stepMs', 100, 60_000);
      for (let index = 0; index < steps; index++) {
        await step.do(`step-${index}`, async ({ signal }) => {
          await sleep(stepMs, signal);
          logRun(step, String(index));
        });
        await step.status(`step ${index + 1} of ${steps} done`);
      }
      const counts = runsOf(step);
      const runs = Array.from({ length: steps }, (_, index) => counts.get(String(index)) ?? 0);
      return {
        content: [{ type: 'text', text: `Ran ${steps} journaled steps for ${String(args['label'] ?? '')}` }],
        structuredContent: { runs },
      };
    }),
  },
  durable_sleep: {
    description: 'Journals the time, sleeps `ms` durably (holding nothing), then journals the time again.',
    inputSchema: object({ ms: { type: 'integer', minimum: 0 }, label: { type: 'string' } }, ['ms']),
    policy: WORKFLOW_POLICY,
    run: withSteps(async (args: FixtureArgs, step) => {
      const before = await step.do('before', () => {
        logRun(step, 'before');
        return Date.now();
      });
      await step.sleep('nap', int(args, 'ms', 1000, 7 * 24 * 60 * 60 * 1000));
      const after = await step.do('after', () => Date.now());
      return {
        content: [{ type: 'text', text: `Slept ${after - before}ms for ${String(args['label'] ?? '')}` }],
        structuredContent: { sleptMs: after - before },
      };
    }),
  },
  timed_sleep: {
    description:
      'A workflow with a per-task timeout of `timeoutMs` (from creation): journals `before`, sleeps `ms` durably, then `after`.',
    inputSchema: object(
      { timeoutMs: { type: 'integer', minimum: 1 }, ms: { type: 'integer', minimum: 0 }, label: { type: 'string' } },
      ['timeoutMs', 'ms'],
    ),
    policy: WORKFLOW_POLICY,
    // The timeout comes from the arguments, so the workflow is built per call; a real tool fixes it at registration.
    run: (args, ctx) =>
      withSteps(
        async (input: FixtureArgs, step) => {
          await step.do('before', () => logRun(step, 'before'));
          await step.sleep('nap', int(input, 'ms', 1000, 7 * 24 * 60 * 60 * 1000));
          await step.do('after', () => logRun(step, 'after'));
          return { content: [{ type: 'text', text: `${String(input['label'] ?? '')}: woke before the timeout` }] };
        },
        { timeoutMs: Math.max(1, int(args, 'timeoutMs', 1000, 7 * 24 * 60 * 60 * 1000)) },
      )(args, ctx),
  },
  flaky_step: {
    description:
      'One journaled step that fails `failures` times before it succeeds, retried with backoff from `baseDelayMs`.',
    inputSchema: object(
      {
        failures: { type: 'integer', minimum: 0 },
        baseDelayMs: { type: 'integer', minimum: 0 },
        label: { type: 'string' },
      },
      ['failures'],
    ),
    policy: WORKFLOW_POLICY,
    run: withSteps(async (args: FixtureArgs, step) => {
      const failures = int(args, 'failures', 2, 10);
      const baseDelayMs = int(args, 'baseDelayMs', 200, 60_000);
      const attempts = await step.do('flaky', { retries: { limit: failures, baseDelayMs } }, ({ attempt }) => {
        logRun(step, `attempt ${Date.now()}`);
        if (attempt <= failures) throw new Error(`attempt ${attempt} failed`);
        return attempt;
      });
      const times = loggedIds(step)
        .filter((id) => id.startsWith('attempt '))
        .map((id) => Number(id.slice('attempt '.length)));
      const gaps = times.slice(1).map((at, index) => at - (times[index] as number));
      return {
        content: [{ type: 'text', text: `${String(args['label'] ?? '')}: succeeded on attempt ${attempts}` }],
        structuredContent: { attempts, gaps },
      };
    }),
  },
  journaled_question: {
    description: 'Journals a preparation step, asks to confirm (boolean `confirm`), then journals a finishing step.',
    inputSchema: object({ label: { type: 'string' } }),
    policy: WORKFLOW_POLICY,
    run: withSteps(async (args: FixtureArgs, step) => {
      const label = String(args['label'] ?? '');
      await step.do('prepare', () => logRun(step, 'prepare'));
      const answer = await step.elicit('confirm', {
        method: 'elicitation/create',
        params: {
          message: `Confirm ${label}?`,
          requestedSchema: object({ confirm: { type: 'boolean' } }, ['confirm']),
        },
      });
      const content = answer['content'] as Record<string, unknown> | undefined;
      const confirm = answer['action'] === 'accept' && content?.['confirm'] === true;
      await step.do('finish', () => logRun(step, 'finish'));
      const prepareRuns = runsOf(step).get('prepare') ?? 0;
      return {
        content: [{ type: 'text', text: `${label}: ${confirm ? 'confirmed' : 'not confirmed'}` }],
        structuredContent: { confirm, prepareRuns },
      };
    }),
  },
  offered_input: {
    description:
      'Offers the standing input "stop" (boolean `stop`), then runs up to `rounds` rounds of a journaled step, a ' +
      'durable sleep of `roundMs` and a check of the offer; stops early once answered with stop=true. Answer it with ' +
      'tasks/update `inputResponses.stop` (2026 extension) or the elicitation sent on tasks/result.',
    inputSchema: object(
      { rounds: { type: 'integer', minimum: 0 }, roundMs: { type: 'integer', minimum: 0 }, label: { type: 'string' } },
      ['rounds'],
    ),
    policy: WORKFLOW_POLICY,
    run: withSteps(async (args: FixtureArgs, step) => {
      const label = String(args['label'] ?? '');
      const rounds = int(args, 'rounds', 3, 1000);
      const roundMs = int(args, 'roundMs', 1000, 24 * 60 * 60 * 1000);
      await step.offer('stop', {
        method: 'elicitation/create',
        params: { message: `Stop ${label}?`, requestedSchema: object({ stop: { type: 'boolean' } }, ['stop']) },
      });
      let completed = 0;
      let stoppedEarly = false;
      for (let round = 0; round < rounds && !stoppedEarly; round++) {
        await step.do(`round-${round}`, () => logRun(step, `round-${round}`));
        await step.sleep(`pause-${round}`, roundMs);
        completed += 1;
        const check = await step.checkInput(`check-${round}`, 'stop');
        const content = check.state === 'answered' ? (check.response['content'] as Record<string, unknown>) : undefined;
        stoppedEarly =
          check.state === 'answered' && check.response['action'] === 'accept' && content?.['stop'] === true;
      }
      return {
        content: [{ type: 'text', text: `${label}: ${completed} rounds${stoppedEarly ? ', stopped early' : ''}` }],
        structuredContent: { rounds: completed, stoppedEarly },
      };
    }),
  },
};
