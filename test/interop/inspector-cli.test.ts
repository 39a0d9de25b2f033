import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, ROOT } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { interopPeer, node22 } from './helpers/interopPeers.js';

const run = promisify(execFile);
const INSPECTOR = interopPeer('@modelcontextprotocol/inspector/clients/launcher/build/index.js');
/** The Inspector requires Node >= 22.19. */
const NODE22 = node22();

/** Runs the Inspector CLI and returns its one JSON output object. */
async function inspector(args: string[]): Promise<Record<string, unknown>> {
  const home = tempDir('inspector-home-');
  mkdirSync(home, { recursive: true });
  const { stdout } = await run(NODE22, [INSPECTOR, '--cli', ...args, '--format', 'json'], {
    env: { ...process.env, HOME: home },
    timeout: 60_000,
  }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout || error.stderr || '' }));
  // The result goes to stdout; an error envelope goes to stderr with a non-zero exit.
  const text = stdout.trim();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return JSON.parse(text.split('\n').at(-1) as string) as Record<string, unknown>;
  }
}

describe('interop: the Inspector CLI 2.12 (legacy era)', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await HttpFixture.start();
  });
  afterAll(async () => fixture.close());

  it('runs a task-required tool as a task and prints its result', async () => {
    const output = await inspector([
      fixture.url,
      '--method',
      'tools/call',
      '--tool-name',
      'generate_report',
      '--tool-arg',
      'pages=3',
    ]);
    expect(output).toMatchObject({ result: { content: [{ type: 'text', text: 'Report ready: 3 pages' }] } });
    // spec R36: the payload carries the task it came from.
    expect(JSON.stringify(output)).toContain('io.modelcontextprotocol/related-task');
  });

  it('reports a failed task with the server’s own explanation', async () => {
    const output = await inspector([fixture.url, '--method', 'tools/call', '--tool-name', 'failing_job']);
    expect(JSON.stringify(output)).toContain('the input data is corrupt');
  });

  it('lists execution.taskSupport', async () => {
    const output = await inspector([fixture.url, '--method', 'tools/list']);
    const tools = (output['result'] as { tools: Array<{ name: string; execution?: { taskSupport: string } }> }).tools;
    expect(tools.find((t) => t.name === 'generate_report')?.execution?.taskSupport).toBe('required');
  });

  it('works over stdio too', async () => {
    const output = await inspector([
      '-e',
      'MCP_TASKS_STORE=memory',
      '--method',
      'tools/call',
      '--tool-name',
      'generate_report',
      '--tool-arg',
      'pages=1',
      '--',
      process.execPath,
      join(ROOT, 'dist/examples/conformance/server.js'),
      '--stdio',
    ]);
    // Depending on its output path the CLI prints the result bare or wrapped; either way it is the tool result.
    expect(output['result'] ?? output).toMatchObject({ content: [{ type: 'text', text: 'Report ready: 1 pages' }] });
  });
});
