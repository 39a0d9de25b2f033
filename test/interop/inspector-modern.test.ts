import { execFile } from 'node:child_process';

import { beforeEach, describe, expect, it } from 'vitest';

import { tempDir } from '../helpers/tmp.js';
import { interopPeer, node22 } from './helpers/interopPeers.js';
import { recordedFixture } from './helpers/recordingProxy.js';

const INSPECTOR = interopPeer('@modelcontextprotocol/inspector/clients/launcher/build/index.js');
/** The Inspector requires Node >= 22.19. */
const NODE22 = node22();

interface CliRun {
  exitCode: number;
  /** The JSON object printed on stdout (the result), if any. */
  stdout: Record<string, unknown> | undefined;
  /** The JSON error envelope printed on stderr, if any. */
  stderr: Record<string, unknown> | undefined;
}

/** The last line of `text` that parses as a JSON object (the CLI's `--format json` output is one object). */
function lastJson(text: string): Record<string, unknown> | undefined {
  for (const line of text.trim().split('\n').reverse()) {
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null) return parsed as Record<string, unknown>;
    } catch {
      // Not the JSON line.
    }
  }
  return undefined;
}

/** Runs the Inspector CLI in its modern era (2026-07-28) with a throwaway HOME; never throws on a non-zero exit. */
function inspector(url: string, args: string[]): Promise<CliRun> {
  const home = tempDir('inspector-home-');
  return new Promise((resolve) => {
    execFile(
      NODE22,
      [INSPECTOR, '--cli', url, '--protocol-era', 'modern', ...args, '--format', 'json'],
      { env: { ...process.env, HOME: home }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        resolve({
          exitCode: typeof code === 'number' ? code : error ? -1 : 0,
          stdout: lastJson(stdout),
          stderr: lastJson(stderr),
        });
      },
    );
  });
}

/** The CLI prints a tool result bare or wrapped in `{result}`, depending on its output path. */
const printedResult = (run: CliRun): Record<string, unknown> | undefined =>
  (run.stdout?.['result'] as Record<string, unknown> | undefined) ?? run.stdout;

describe('interop: the Inspector CLI 2.12 (modern era, 2026-07-28 + tasks extension)', () => {
  // The CLI cannot be instrumented: a recording proxy shows what it really did on the wire.
  const recorded = recordedFixture();
  beforeEach(() => {
    recorded.proxy.exchanges.length = 0;
  });

  const toolCall = (tool: string, ...toolArgs: string[]) =>
    inspector(recorded.proxy.url, [
      '--method',
      'tools/call',
      '--tool-name',
      tool,
      ...(toolArgs.length > 0 ? ['--tool-arg', ...toolArgs] : []),
    ]);

  /** The one task the CLI's tools/call created, and the tasks/get polls it sent for it. */
  function taskTraffic() {
    const [call] = recorded.proxy.calls('tools/call');
    const created = call?.response?.result as { resultType?: string; taskId?: string } | undefined;
    return { call, created, polls: recorded.proxy.calls('tasks/get') };
  }

  it('negotiates 2026-07-28 with server/discover and declares the tasks extension', async () => {
    const run = await inspector(recorded.proxy.url, ['--method', 'tools/list']);
    expect(run.exitCode).toBe(0);
    const tools = (printedResult(run)?.['tools'] ?? []) as Array<{ name: string; execution?: unknown }>;
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['greet', 'generate_report', 'failing_job']));
    // spec §3.1: execution.taskSupport does not exist on the 2026-07-28 wire.
    for (const tool of tools) expect(tool.execution).toBeUndefined();

    expect(recorded.proxy.exchanges.some((exchange) => exchange.message?.method === 'initialize')).toBe(false);
    const [discover] = recorded.proxy.calls('server/discover');
    expect(discover?.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(discover?.request.params?.['_meta']).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    expect(discover?.response?.result).toMatchObject({
      supportedVersions: expect.arrayContaining(['2026-07-28']),
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
  });

  it('prints the plain result of a tool without tasks', async () => {
    const run = await toolCall('greet', 'name=Ada');
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBeUndefined();
    expect(printedResult(run)).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });
    expect(taskTraffic().created?.resultType).toBe('complete');
    expect(recorded.proxy.calls('tasks/get')).toEqual([]);
  });

  it('follows a task-required tool through its task and prints the result', async () => {
    const run = await toolCall('generate_report', 'pages=3');
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBeUndefined();
    expect(printedResult(run)).toMatchObject({ content: [{ type: 'text', text: 'Report ready: 3 pages' }] });

    // It really was a task: a flat CreateTaskResult (spec E3), then tasks/get polls with Mcp-Name (E17)
    // until the inlined result.
    const { call, created, polls } = taskTraffic();
    expect(call?.headers).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'generate_report' });
    expect(created).toMatchObject({ resultType: 'task', taskId: expect.any(String), status: 'working' });
    expect(polls.length).toBeGreaterThan(0);
    for (const poll of polls) {
      expect(poll.request.params?.['taskId']).toBe(created?.taskId);
      expect(poll.headers).toMatchObject({ 'mcp-method': 'tasks/get', 'mcp-name': created?.taskId });
    }
    expect(polls.at(-1)?.response?.result).toMatchObject({
      resultType: 'complete',
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Report ready: 3 pages' }] },
    });
  });

  it('prints a tool error (isError) that completed its task, and exits non-zero', async () => {
    const run = await toolCall('failing_job');
    // The result on stdout, a tool_is_error envelope on stderr, exit 5.
    expect(printedResult(run)).toMatchObject({
      content: [{ type: 'text', text: 'The job failed: the input data is corrupt.' }],
      isError: true,
    });
    expect(run.stderr).toMatchObject({
      error: { code: 'tool_is_error', message: expect.stringContaining('failing_job') },
    });
    expect(run.exitCode).toBe(5);

    // spec E15: on the extension an isError result completes the task (no `failed`, no `error`).
    const { created, polls } = taskTraffic();
    expect(created?.resultType).toBe('task');
    const final = polls.at(-1)?.response?.result;
    expect(final).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(final).not.toHaveProperty('error');
  });

  it('reports a task that failed with a JSON-RPC error by its message', async () => {
    const run = await toolCall('protocol_error_job');
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout).toBeUndefined();
    expect(run.stderr).toMatchObject({
      error: { message: 'protocol_error_job: the upstream service refused the request' },
    });
    const { created, polls } = taskTraffic();
    expect(created?.resultType).toBe('task');
    expect(polls.at(-1)?.response?.result).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'protocol_error_job: the upstream service refused the request' },
    });
  });
});
