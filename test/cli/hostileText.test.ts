import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { requireTool } from '../helpers/requireTool.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, ensureBuilt, jsonLines, runCli, type CliRun } from './helpers/cli.js';
import { HOSTILE, RAW_CONTROLS, startHostileServer, type HostileServer } from './helpers/hostileServer.js';

/**
 * A server whose tool descriptions, status messages, questions, results and errors carry terminal escape sequences
 * (clear screen, window title, clipboard, C1 CSI, bidi override): the CLI shows each as visible text, on a person's
 * output and in `--json` lines alike.
 */
let server: HostileServer;
let env: Record<string, string>;
/** How `ESC[2J` looks once made visible. */
const SHOWN = '\\u001b[2J';

beforeAll(async () => {
  ensureBuilt();
  server = await startHostileServer();
  env = { MCP_TASKS_HANDLES: join(tempDir(), 'handles.json') };
});

afterAll(async () => {
  await server.close();
});

function expectNoRawControls(run: CliRun): void {
  expect(run.stdout).not.toMatch(RAW_CONTROLS);
  expect(run.stderr).not.toMatch(RAW_CONTROLS);
}

/** JSON lines: no raw control in the text, and the server's strings unchanged once parsed. */
function expectSafeJson(run: CliRun): Array<Record<string, unknown>> {
  expectNoRawControls(run);
  return jsonLines(run.stdout);
}

describe('a hostile server, seen through the CLI', () => {
  it('tools: descriptions shown as visible escapes', async () => {
    const human = await runCli(['--url', server.url, 'tools'], { env });
    expect(human.code).toBe(EXIT_CODES.completed);
    expectNoRawControls(human);
    expect(human.stdout).toContain(`Asks evil${SHOWN}`);
    expect(human.stdout).toContain('\\u009b31mred\\u202edesrever');

    const json = await runCli(['--url', server.url, '--json', 'tools'], { env });
    const tools = expectSafeJson(json);
    expect(tools).toContainEqual(expect.objectContaining({ name: 'ask', description: `Asks ${HOSTILE}` }));
  });

  it.each([['2026-07-28'], ['legacy']])(
    'call (%s wire): status, question, field title, description and labels, failure message',
    async (protocol) => {
      const human = await runCli(['--url', server.url, '--protocol', protocol, 'call', 'ask'], { env, stdin: '1\n' });
      expect(human.code).toBe(EXIT_CODES.failed);
      expectNoRawControls(human);
      // The runtime turns progress into a statusMessage for pollers on the 2025 wire.
      const parts = ['question', 'title', 'description', 'label', ...(protocol === 'legacy' ? ['status'] : [])];
      for (const part of parts) expect(human.stderr).toContain(`${part} evil${SHOWN}`);
      expect(human.stdout).toContain(`failure evil${SHOWN}`);
      expect(human.stderr).toContain(`failure evil${SHOWN}`);

      const json = await runCli(['--url', server.url, '--protocol', protocol, '--json', 'call', 'ask'], {
        env,
        stdin: '{"choice":"a"}\n',
      });
      expect(json.code).toBe(EXIT_CODES.failed);
      const events = expectSafeJson(json);
      const question = events.find((event) => event.type === 'elicitation');
      expect((question?.params as { message: string }).message).toBe(`question ${HOSTILE}`);
      if (protocol === 'legacy')
        expect(events).toContainEqual(expect.objectContaining({ type: 'status', statusMessage: `status ${HOSTILE}` }));
      expect(events.at(-1)).toMatchObject({ type: 'outcome', status: 'failed', message: `failure ${HOSTILE} (a)` });
    },
  );

  it('get and list: rows with the hostile status message', async () => {
    const detach = await runCli(['--url', server.url, '--protocol', 'legacy', 'call', 'linger', '--detach'], { env });
    const taskId = detach.stdout.trim();
    expect(taskId).toMatch(/^\S+$/);
    try {
      let get: CliRun | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        get = await runCli(['get', taskId], { env });
        if (get.stdout.includes('message')) break;
      }
      expectNoRawControls(get as CliRun);
      expect(get?.stdout).toContain(`status evil${SHOWN}`);
      const getJson = expectSafeJson(await runCli(['--json', 'get', taskId], { env }));
      expect(getJson[0]).toMatchObject({ taskId, statusMessage: `status ${HOSTILE}` });

      const list = await runCli(['--url', server.url, '--protocol', 'legacy', 'list'], { env });
      expectNoRawControls(list);
      expect(list.stdout).toContain(`${taskId}  working        status evil${SHOWN}`);
      const listJson = expectSafeJson(
        await runCli(['--url', server.url, '--protocol', 'legacy', '--json', 'list'], { env }),
      );
      expect(listJson).toContainEqual(expect.objectContaining({ taskId, statusMessage: `status ${HOSTILE}` }));
    } finally {
      await runCli(['cancel', taskId], { env });
    }
  });

  it("errors: a plain call's JSON-RPC error message", async () => {
    const human = await runCli(['--url', server.url, 'call', 'broken', '--mode', 'plain'], { env });
    expect(human.code).toBe(EXIT_CODES.failed);
    expectNoRawControls(human);
    expect(human.stderr).toContain(`error evil${SHOWN}`);

    const json = await runCli(['--url', server.url, '--json', 'call', 'broken', '--mode', 'plain'], { env });
    const events = expectSafeJson(json);
    expect(JSON.stringify(events.at(-1))).toContain(JSON.stringify(`error ${HOSTILE}`).slice(1, -1));
  });
});

/** `script` (util-linux) gives the binary a pseudo-terminal, so the live status line is drawn. */
const SCRIPT = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));
const HAS_SCRIPT = requireTool('script (util-linux)', SCRIPT !== undefined, 'apt-get install bsdutils');

describe.runIf(HAS_SCRIPT)('a hostile server on a terminal', () => {
  it('the live status line and the result show the escapes, and only the line draws its own erase', async () => {
    const command = ['node', CLI, '--url', server.url, 'call', 'noisy'].map((part) => `'${part}'`).join(' ');
    const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(SCRIPT as string, ['-qfec', command, '/dev/null'], { env: { ...process.env, ...env } });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('close', (code) => resolve({ code, output }));
    });
    expect(run.code).toBe(EXIT_CODES.completed);
    const ERASE = `\r${String.fromCharCode(27)}[2K`;
    expect(run.output).toContain(ERASE);
    // The pseudo-terminal turns each newline into CRLF.
    const drawn = run.output.split(ERASE).join('').replace(/\r\n/g, '\n');
    expect(drawn).not.toMatch(RAW_CONTROLS);
    expect(drawn).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working {2}status evil\\u001b\[2J/);
    expect(drawn).toContain(`first line\nresult evil${SHOWN}`);
  });
});
