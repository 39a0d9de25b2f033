import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { startEngine } from '../helpers/engines.js';
import { tempDir } from '../helpers/tmp.js';
import { ensureBuilt, jsonLines, runCli } from './helpers/cli.js';

beforeAll(() => ensureBuilt());

describe('mcp-tasks get --timeline', () => {
  it("prints a stored task's transitions, as text and as JSON", async () => {
    const path = join(tempDir(), 'tasks.db');
    const engine = await startEngine(new SqliteStore({ path }));
    const { task } = await engine.create({
      owner: 'alice',
      request: { method: 'tools/call', params: { name: 'paint', arguments: {} } },
      dialect: 'core-2025-11-25',
      run: false,
    });
    await engine.markStarted(task.taskId, 'worker-7');
    await engine.requestInput(task.taskId, [{ method: 'elicitation/create', params: { message: 'Which colour?' } }]);
    await engine.cancel('alice', task.taskId, 'no longer needed');
    await engine.close();

    const text = await runCli(['get', task.taskId, '--timeline', '--task-store', path]);
    expect(text.code).toBe(EXIT_CODES.completed);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toBe(`task ${task.taskId} cancelled (paint) owner alice`);
    expect(
      lines.slice(1).map((line) =>
        line
          .split(/\s{2,}/)
          .slice(2)
          .join(' '),
      ),
    ).toEqual([
      'created (working)',
      'attempt 1 started on worker-7',
      'asked (elicitation/create): Which colour?',
      'status working → input_required',
      'cancelled by alice',
      'status input_required → cancelled',
      'message: no longer needed',
    ]);

    const json = await runCli(['--json', 'get', task.taskId, '--timeline', '--task-store', path]);
    const [event] = jsonLines(json.stdout);
    expect(event).toMatchObject({ type: 'timeline', taskId: task.taskId, status: 'cancelled', owner: 'alice' });
    expect((event?.entries as unknown[]).length).toBe(7);

    const missing = await runCli(['get', 'no-such-task', '--timeline', '--task-store', path]);
    expect(missing.code).toBe(EXIT_CODES.notFound);
  });
});
