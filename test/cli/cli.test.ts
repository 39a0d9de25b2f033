import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { EVERYTHING_ENTRY, freePort, startEverythingHttp, type RunningServer } from '../client/helpers/everything.js';
import { requireTool } from '../helpers/requireTool.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, ensureBuilt, jsonLines, runCli, startCli } from './helpers/cli.js';

/** The `mcp-tasks` binary, spawned without a terminal, against server-everything over stdio and Streamable HTTP. */
const STDIO = ['--', process.execPath, EVERYTHING_ENTRY, 'stdio'];

let http: RunningServer;
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  http = await startEverythingHttp();
  env = { MCP_TASKS_HANDLES: join(tempDir(), 'handles.json') };
});

afterAll(async () => {
  await http.stop();
});

describe('mcp-tasks call', () => {
  it('runs a task and prints the result on stdout, status lines on stderr (no terminal)', async () => {
    const run = await runCli(['call', 'simulate-research-query', 'topic=otters', ...STDIO], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toContain('# Research Report: otters');
    expect(run.stderr).toMatch(/task \S+ \(2025-11-25\)/);
    expect(run.stderr).toMatch(/\] working {2}Gathering sources\.\.\./);
    expect(run.stderr).toMatch(/completed in [\d.]+s/);
    // Without a terminal there is no live line to redraw.
    expect(run.stderr).not.toContain('\r');
  });

  it('prints one JSON object per line with --json', async () => {
    const run = await runCli(['--json', 'call', 'simulate-research-query', 'topic=otters', ...STDIO], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    const events = jsonLines(run.stdout);
    expect(events[0]).toMatchObject({ type: 'task', dialect: '2025-11-25', tool: 'simulate-research-query' });
    expect(events.filter((event) => event.type === 'status').length).toBeGreaterThanOrEqual(2);
    const outcome = events.at(-1);
    expect(outcome).toMatchObject({ type: 'outcome', status: 'completed', taskId: events[0]?.taskId });
    expect(JSON.stringify(outcome?.result)).toContain('otters');
  });

  it("takes --json '{...}' as the tool arguments", async () => {
    const run = await runCli(['--json', '{"topic":"json args"}', 'call', 'simulate-research-query', ...STDIO], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(JSON.stringify(jsonLines(run.stdout).at(-1))).toContain('json args');
  });

  it('asks for elicitation on stdin', async () => {
    const run = await runCli(['call', 'simulate-research-query', 'topic=python', 'ambiguous=true', ...STDIO], {
      env,
      stdin: '3\n',
    });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stderr).toContain('could have multiple interpretations');
    expect(run.stderr).toContain('3) Monty Python comedy group');
    expect(run.stdout).toContain('python (comedy)');
  });

  it('emits elicitation as an event and reads the answer as a JSON line with --json', async () => {
    const run = await runCli(
      ['--json', 'call', 'simulate-research-query', 'topic=python', 'ambiguous=true', ...STDIO],
      {
        env,
        stdin: '{"interpretation":"programming"}\n',
      },
    );
    expect(run.code).toBe(EXIT_CODES.completed);
    const events = jsonLines(run.stdout);
    const elicitation = events.find((event) => event.type === 'elicitation');
    expect(elicitation).toMatchObject({ dialect: '2025-11-25', taskId: events[0]?.taskId });
    expect(JSON.stringify(events.at(-1))).toContain('python (programming)');
  });

  it('declines elicitation with --no-input', async () => {
    const run = await runCli(
      ['--no-input', 'call', 'simulate-research-query', 'topic=python', 'ambiguous=true', ...STDIO],
      {
        env,
      },
    );
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toContain('User declined');
  });

  it('cancels the task on Ctrl-C and reports the final status (JSON mode)', async () => {
    const cli = startCli(['--json', 'call', 'simulate-research-query', 'topic=interrupted', ...STDIO], { env });
    await cli.waitFor((stdout) => stdout.includes('"Analyzing content..."'));
    cli.child.kill('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(EXIT_CODES.cancelled);
    const events = jsonLines(run.stdout);
    const statuses = events.filter((event) => event.type === 'status');
    expect(statuses.some((event) => event.cancelRequested === true)).toBe(true);
    expect(statuses.at(-1)).toMatchObject({ status: 'cancelled' });
    expect(events.at(-1)).toMatchObject({ type: 'outcome', status: 'cancelled' });
    // Nothing follows the final word: no completed status after cancelled.
    expect(statuses.filter((event) => event.status === 'completed')).toHaveLength(0);
  });

  it('cancels the task on Ctrl-C in human mode too', async () => {
    const cli = startCli(['call', 'simulate-research-query', 'topic=interrupted', ...STDIO], { env });
    await cli.waitFor((_stdout, stderr) => stderr.includes('Analyzing content...'));
    cli.child.kill('SIGINT');
    const run = await cli.done;
    expect(run.code).toBe(EXIT_CODES.cancelled);
    expect(run.stderr).toContain('Cancelling…');
    expect(run.stderr).toMatch(/cancelled \(task \S+\): /);
    expect(run.stdout).toBe('');
  });

  it('runs a tool without task support plainly', async () => {
    const run = await runCli(['call', 'echo', 'message=plain', ...STDIO], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout.trim()).toBe('Echo: plain');
    expect(run.stderr).toContain('plain call');
  });

  it('exits with the documented codes for failure, unsupported mode and usage errors', async () => {
    const failed = await runCli(['call', 'no-such-tool', ...STDIO], { env });
    expect(failed.code).toBe(EXIT_CODES.failed);
    const unsupported = await runCli(['call', 'echo', 'message=x', '--mode', 'task', ...STDIO], { env });
    expect(unsupported.code).toBe(EXIT_CODES.notSupported);
    expect(unsupported.stderr).toContain('taskSupport: forbidden');
    expect((await runCli(['call', 'echo'], { env })).code).toBe(EXIT_CODES.usage);
    expect((await runCli(['call', 'echo', 'novalue', ...STDIO], { env })).code).toBe(EXIT_CODES.usage);
    expect((await runCli(['call', 'echo', '--mode', 'sometimes', ...STDIO], { env })).code).toBe(EXIT_CODES.usage);
    expect((await runCli(['frobnicate'], { env })).code).toBe(EXIT_CODES.usage);
  });

  it('exits with the connection code when the server cannot be reached', async () => {
    const port = await freePort();
    const run = await runCli(['--url', `http://127.0.0.1:${port}/mcp`, 'call', 'echo', 'message=x'], { env });
    expect(run.code).toBe(EXIT_CODES.connection);
    expect(run.stderr).toContain('connection error');
  });
});

/** `script` (util-linux) gives the binary a pseudo-terminal, so the live status line can be seen as a person would. */
const SCRIPT = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));
const HAS_SCRIPT = requireTool('script (util-linux)', SCRIPT !== undefined, 'apt-get install bsdutils');

describe.runIf(HAS_SCRIPT)('mcp-tasks on a terminal', () => {
  it('draws a live status line (spinner, status, message, elapsed) and clears it before the result', async () => {
    const command = ['node', CLI, 'call', 'simulate-research-query', 'topic=terminal', ...STDIO]
      .map((part) => `'${part}'`)
      .join(' ');
    const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(SCRIPT as string, ['-qfec', command, '/dev/null'], { env: { ...process.env, ...env } });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('close', (code) => resolve({ code, output }));
    });
    expect(run.code).toBe(EXIT_CODES.completed);
    const ERASE = `\r${String.fromCharCode(27)}[2K`;
    expect(run.output).toContain(ERASE);
    expect(run.output).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working {2}Gathering sources\.\.\. {2}\d+\.\ds/);
    expect(run.output).toContain('# Research Report: terminal');
    expect(run.output).toMatch(/completed in [\d.]+s/);
  });
});

describe('mcp-tasks with a detached task over Streamable HTTP', () => {
  it('detaches, then get / watch / result / cancel find the task again through the handle store', async () => {
    const detach = await runCli(['--url', http.url, 'call', 'simulate-research-query', 'topic=detached', '--detach'], {
      env,
    });
    expect(detach.code).toBe(EXIT_CODES.completed);
    const taskId = detach.stdout.trim();
    expect(taskId).toMatch(/^\S+$/);

    // No --url: the stored handle names the server and the session the task lives in.
    const get = await runCli(['get', taskId], { env });
    expect(get.code).toBe(EXIT_CODES.completed);
    expect(get.stdout).toMatch(/status +working/);

    const watch = await runCli(['--json', 'watch', taskId], { env });
    expect(watch.code).toBe(EXIT_CODES.completed);
    expect(jsonLines(watch.stdout).at(-1)).toMatchObject({ type: 'outcome', status: 'completed', taskId });

    // A completed task cannot be cancelled: the -32602 is the answer, reported as the final status.
    const cancel = await runCli(['cancel', taskId], { env });
    expect(cancel.code).toBe(EXIT_CODES.completed);
    expect(cancel.stderr).toContain('completed');

    const result = await runCli(['result', taskId], { env });
    expect(result.code).toBe(EXIT_CODES.completed);
    expect(result.stdout).toContain('# Research Report: detached');

    // The handle outlives `result`: `get` still finds the server and the session the task lives in.
    const again = await runCli(['get', taskId], { env });
    expect(again.code).toBe(EXIT_CODES.completed);
    expect(again.stdout).toMatch(/status +completed/);
    expect((await runCli(['--url', http.url, 'get', 'no-such-task'], { env })).code).toBe(EXIT_CODES.notFound);
  });

  it('cancels a detached working task by id', async () => {
    // An ambiguous topic makes the tool ask which one is meant: no one answers, so the task waits however slow the
    // machine is, until the cancel.
    const detach = await runCli(
      ['--url', http.url, 'call', 'simulate-research-query', 'topic=stop', 'ambiguous=true', '--detach'],
      { env },
    );
    const taskId = detach.stdout.trim();
    const cancel = await runCli(['--json', 'cancel', taskId], { env });
    expect(cancel.code).toBe(EXIT_CODES.cancelled);
    expect(jsonLines(cancel.stdout).at(-1)).toMatchObject({ type: 'outcome', status: 'cancelled', taskId });
  });

  it('lists the tasks of the stored session', async () => {
    const detach = await runCli(['--url', http.url, 'call', 'simulate-research-query', 'topic=listed', '--detach'], {
      env,
    });
    const taskId = detach.stdout.trim();
    const list = await runCli(['--url', http.url, '--json', 'list'], { env });
    expect(list.code).toBe(EXIT_CODES.completed);
    const events = jsonLines(list.stdout);
    expect(events.some((event) => event.type === 'status' && event.taskId === taskId)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'list', source: 'server' });
    await runCli(['cancel', taskId], { env });
  });

  it('lists tools with their task support', async () => {
    const run = await runCli(['--url', http.url, '--json', 'tools'], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(jsonLines(run.stdout)).toContainEqual(
      expect.objectContaining({ type: 'tool', name: 'simulate-research-query', taskSupport: 'required' }),
    );
  });
});

describe('mcp-tasks --help', () => {
  it.each(['call', 'get', 'result', 'list', 'cancel', 'watch', 'serve', 'tools'])('documents %s', async (command) => {
    const run = await runCli([command, '--help'], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toContain(`Usage: mcp-tasks ${command}`);
  });

  it('documents the exit codes at the top level', async () => {
    const run = await runCli(['--help'], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toContain('Exit codes:');
    expect(run.stdout).toContain('4  cancelled');
  });
});

describe('mcp-tasks serve', () => {
  const demo = fileURLToPath(new URL('../../dist/examples/demo/server.js', import.meta.url));

  it.skipIf(existsSync(demo))('explains that the demo server is not built', async () => {
    const run = await runCli(['serve', '--port', '0'], { env });
    expect(run.code).toBe(EXIT_CODES.failed);
    expect(run.stderr).toContain('demo server is not available');
  });

  it.runIf(existsSync(demo))('serves the demo over Streamable HTTP on 127.0.0.1', async () => {
    // The demo keeps its tasks where MCP_TASKS_STORE says; the handle store is MCP_TASKS_HANDLES.
    const serve = startCli(['serve', '--port', '0'], { env: { ...env, MCP_TASKS_STORE: join(tempDir(), 'demo.db') } });
    try {
      await serve.waitFor((_stdout, stderr) => /serving on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(stderr));
      const url = /serving on (\S+)/.exec(serve.stderr())?.[1] as string;
      const tools = await runCli(['--url', url, '--json', 'tools'], { env });
      expect(tools.code).toBe(EXIT_CODES.completed);
      expect(jsonLines(tools.stdout).length).toBeGreaterThan(0);
    } finally {
      serve.child.kill('SIGINT');
      await serve.done;
    }
  });
});
