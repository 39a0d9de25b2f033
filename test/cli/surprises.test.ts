import { join } from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { tempDir } from '../helpers/tmp.js';
import { ensureBuilt, jsonLines, runCli } from './helpers/cli.js';
import { startTaskServer, type TaskServer } from './helpers/taskServer.js';

/** The CLI across runs: each run is a new process, as a person at a shell uses it. */
let server: TaskServer;
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  server = await startTaskServer();
});

beforeEach(() => {
  env = { MCP_TASKS_HANDLES: join(tempDir(), 'handles.json') };
});

afterAll(async () => {
  await server.close();
});

const cli = (args: string[], stdin?: string) =>
  runCli(['--url', server.url, ...args], { env, ...(stdin !== undefined && { stdin }) });

async function taskIdOf(args: string[]): Promise<string> {
  const run = await cli(['--json', ...args]);
  expect(run.code).toBe(EXIT_CODES.completed);
  return jsonLines(run.stdout)[0]?.['taskId'] as string;
}

describe('list', () => {
  it.each([['2026-07-28'], ['legacy']])(
    'shows the tasks earlier runs created, after they ended (%s wire)',
    async (protocol) => {
      const first = await taskIdOf(['--protocol', protocol, 'call', 'quick', 'label=one']);
      const second = await taskIdOf(['--protocol', protocol, 'call', 'quick', 'label=two']);
      const list = await cli(['--protocol', protocol, '--json', 'list']);
      expect(list.code).toBe(EXIT_CODES.completed);
      const listed = jsonLines(list.stdout).filter((event) => event.type === 'status');
      expect(listed.map((task) => task['taskId'])).toEqual(expect.arrayContaining([first, second]));
      expect(listed.find((task) => task['taskId'] === first)).toMatchObject({ status: 'completed' });

      const human = await cli(['--protocol', protocol, 'list']);
      expect(human.stdout).toContain(`${first}  completed`);
      expect(human.stderr).not.toContain('no stored tasks');
    },
  );
});

describe('--dialect', () => {
  it('applies to its own run only, unless saved with --save-dialect', async () => {
    const dialectOf = async (args: string[]) =>
      jsonLines((await cli(['--json', ...args, 'call', 'quick', '--detach'])).stdout)[0]?.['dialect'];
    expect(await dialectOf(['--dialect', '2025-11-25'])).toBe('2025-11-25');
    // The session that run opened is not the next run's choice of dialect.
    expect(await dialectOf([])).toBe('ext-2026');

    expect((await cli(['--dialect', '2025-11-25', '--save-dialect', 'tools'])).code).toBe(EXIT_CODES.completed);
    expect(await dialectOf([])).toBe('2025-11-25');
    expect(await dialectOf(['--dialect', 'ext-2026'])).toBe('ext-2026');
    expect((await cli(['--dialect', 'auto', '--save-dialect', 'tools'])).code).toBe(EXIT_CODES.completed);
    expect(await dialectOf([])).toBe('ext-2026');
  });
});

describe('get, result and watch', () => {
  it('get works after result, and watch reports the task its own times', async () => {
    const taskId = (await cli(['call', 'quick', '--detach'])).stdout.trim();
    const result = await runCli(['result', taskId], { env });
    expect(result.code).toBe(EXIT_CODES.completed);
    expect(result.stdout).toContain('done');

    const get = await runCli(['--json', 'get', taskId], { env });
    expect(get.code).toBe(EXIT_CODES.completed);
    const snapshot = jsonLines(get.stdout)[0] as { status: string; createdAt: string; lastUpdatedAt: string };
    expect(snapshot).toMatchObject({ taskId, status: 'completed' });

    // The task ran QUICK_MS on the server; watching it afterwards takes no time of its own worth reporting.
    const ran = ((Date.parse(snapshot.lastUpdatedAt) - Date.parse(snapshot.createdAt)) / 1000).toFixed(1);
    const watch = await runCli(['watch', taskId], { env });
    expect(watch.code).toBe(EXIT_CODES.completed);
    expect(watch.stderr).toContain(`completed in ${ran}s (task ${taskId})`);
  });
});

describe('tools', () => {
  it('shows task support on every wire, each tool with its arguments, and no fallback tools', async () => {
    const modern = jsonLines((await cli(['--json', 'tools'])).stdout);
    expect(modern.map((tool) => tool['name'])).toEqual(['quick', 'greet']);
    // The 2026 wire declares no task support: the server decides per call.
    expect(modern[0]).toMatchObject({ taskSupport: 'server-decided' });
    expect(modern[1]).toMatchObject({
      taskSupport: 'server-decided',
      arguments: [
        { name: 'name', type: 'string', required: true, description: 'Who to greet' },
        { name: 'loud', type: 'boolean', required: false },
      ],
    });
    const legacy = jsonLines((await cli(['--protocol', 'legacy', '--json', 'tools'])).stdout);
    expect(legacy.map((tool) => [tool['name'], tool['taskSupport']])).toEqual([
      ['quick', 'optional'],
      ['greet', 'forbidden'],
    ]);

    const human = await cli(['tools']);
    expect(human.stdout).toMatch(
      /^greet +server-decided +Greets someone \(plain\)\n {4}name: string, loud\?: boolean$/m,
    );
    expect(human.stdout).not.toContain('task_');
  });
});

describe('call', () => {
  it('checks the arguments against the input schema before sending them', async () => {
    const misspelt = await cli(['call', 'greet', 'nmae=Ada']);
    expect(misspelt.code).toBe(EXIT_CODES.usage);
    expect(misspelt.stderr).toContain('greet: unknown argument "nmae"; missing required argument "name"');
    expect(misspelt.stderr).toContain('its arguments: name, loud');
    expect(misspelt.stdout).toBe('');

    const missing = await cli(['--json', 'call', 'greet', 'loud=true']);
    expect(missing.code).toBe(EXIT_CODES.usage);
    expect(jsonLines(missing.stdout).at(-1)).toMatchObject({
      type: 'error',
      message: expect.stringContaining('missing required argument "name"'),
    });

    const right = await cli(['call', 'greet', 'name=Ada', 'loud=true']);
    expect(right.code).toBe(EXIT_CODES.completed);
    expect(right.stdout.trim()).toBe('HELLO Ada');

    // --no-validate leaves the judgement to the server.
    const unchecked = await cli(['call', 'greet', 'name=Ada', 'extra=1', '--no-validate']);
    expect(unchecked.stderr).not.toContain('unknown argument');
  });
});
