import { describe, expect, it } from 'vitest';

import {
  InvalidTransitionError,
  TASK_STATUSES,
  TaskEngine,
  TaskTerminalError,
  canTransition,
  isTerminal,
  type TaskStatus,
} from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';

// spec R15 R16 R17: the complete table of legal transitions.
const LEGAL = new Set([
  'working>input_required',
  'working>completed',
  'working>failed',
  'working>cancelled',
  'input_required>working',
  'input_required>completed',
  'input_required>failed',
  'input_required>cancelled',
]);

describe('status transitions', () => {
  for (const from of TASK_STATUSES) {
    for (const to of TASK_STATUSES) {
      const legal = LEGAL.has(`${from}>${to}`);
      it(`${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
        expect(canTransition(from, to)).toBe(legal);
      });
    }
  }

  it('knows the terminal statuses', () => {
    expect(TASK_STATUSES.filter((s) => isTerminal(s))).toEqual(['completed', 'failed', 'cancelled']);
  });
});

/** Drives a fresh task into `from` through the engine's own API. */
async function taskIn(engine: TaskEngine, from: TaskStatus): Promise<string> {
  const { task } = await engine.create({ owner: 'o', request: { method: 'tools/call', params: {} }, dialect: 'test' });
  if (from === 'input_required') await engine.requestInput(task.taskId, [{ method: 'elicitation/create' }]);
  if (from === 'completed') await engine.complete(task.taskId, { kind: 'result', result: { content: [] } });
  if (from === 'failed') await engine.fail(task.taskId, 'broken');
  if (from === 'cancelled') await engine.cancel('o', task.taskId);
  expect((await engine.get('o', task.taskId)).status).toBe(from);
  return task.taskId;
}

/** Attempts `to` through the engine API that leads there. */
async function attempt(engine: TaskEngine, taskId: string, to: TaskStatus): Promise<boolean> {
  switch (to) {
    case 'working':
      return (await engine.resume(taskId)).status === 'working';
    case 'input_required':
      await engine.requestInput(taskId, [{ method: 'elicitation/create' }]);
      return true;
    case 'completed':
      return engine.complete(taskId, { kind: 'result', result: { content: [] } });
    case 'failed':
      return engine.fail(taskId, 'x');
    case 'cancelled':
      return (await engine.cancel('o', taskId)).status === 'cancelled';
  }
}

describe('engine enforces the transition table for every pair', () => {
  for (const from of TASK_STATUSES) {
    for (const to of TASK_STATUSES) {
      if (from === to) continue;
      const legal = LEGAL.has(`${from}>${to}`);
      it(`${from} -> ${to}`, async () => {
        const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
        await engine.start();
        const taskId = await taskIn(engine, from);
        const outcome = await attempt(engine, taskId, to).then(
          (applied) => (applied ? 'applied' : 'refused'),
          (error: unknown) => {
            expect(error instanceof TaskTerminalError || error instanceof InvalidTransitionError).toBe(true);
            return 'refused';
          },
        );
        const status = (await engine.get('o', taskId)).status;
        if (legal) {
          expect(outcome).toBe('applied');
          expect(status).toBe(to);
        } else {
          expect(outcome).toBe('refused');
          expect(status).toBe(from);
        }
        await engine.close();
      });
    }
  }
});
