import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { interopPeer } from './helpers/interopPeers.js';

const MCPC = interopPeer('@apify/mcpc/bin/mcpc');

interface McpcRun {
  code: number;
  json: Record<string, unknown> | undefined;
  output: string;
}

/**
 * `@apify/mcpc@0.2.6`, a third-party MCP command-line client with 2025-11-25 task support (SDK 1.x underneath, one
 * bridge process per named session): a tool run as a task, a detached task followed by id, and cancels.
 */
describe('interop: the mcpc CLI 0.2.6 (2025-11-25 tasks)', () => {
  let fixture: HttpFixture;
  let home: string;

  /** One mcpc command with its state in a throwaway home; `--json` output parsed. */
  const mcpc = (args: string[]): Promise<McpcRun> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [MCPC, ...args],
        { env: { ...process.env, HOME: home, MCPC_HOME_DIR: home }, timeout: 60_000 },
        (error, stdout, stderr) => {
          let json: Record<string, unknown> | undefined;
          try {
            json = JSON.parse(stdout) as Record<string, unknown>;
          } catch {
            json = undefined;
          }
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, json, output: `${stdout}${stderr}` });
        },
      );
    });

  beforeAll(async () => {
    home = tempDir('mcpc-home-');
    fixture = await HttpFixture.start();
    const connected = await mcpc(['connect', fixture.url, '@fixture']);
    expect(connected.code, connected.output).toBe(0);
  });

  afterAll(async () => {
    // The bridge process belongs to the session: closing the session ends it; a leftover one is killed by pid.
    const sessions = (() => {
      try {
        return JSON.parse(readFileSync(join(home, 'sessions.json'), 'utf8')) as {
          sessions: Record<string, { pid?: number }>;
        };
      } catch {
        return { sessions: {} };
      }
    })();
    await mcpc(['close', '@fixture']);
    for (const session of Object.values(sessions.sessions)) {
      if (session.pid === undefined) continue;
      try {
        process.kill(session.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    await fixture?.close();
  });

  it('lists task support per tool', async () => {
    const listed = await mcpc(['--json', '@fixture', 'tools-list']);
    const tools = (Array.isArray(listed.json) ? listed.json : (listed.json?.['tools'] ?? [])) as Array<{
      name: string;
      execution?: { taskSupport?: string };
    }>;
    expect(tools.find((tool) => tool.name === 'slow_compute')?.execution?.taskSupport).toBe('optional');
  });

  it('runs a tool as a task and prints its result', async () => {
    const run = await mcpc([
      '--json',
      '@fixture',
      'tools-call',
      'slow_compute',
      'seconds:=0.3',
      'label:=cli',
      '--task',
    ]);
    expect(run.code, run.output).toBe(0);
    expect(run.json?.['content']).toEqual([{ type: 'text', text: 'Computed cli in 0.3s' }]);
  });

  it('detaches a task, follows it by id to its result, and cancels another one', async () => {
    const detached = await mcpc([
      '--json',
      '@fixture',
      'tools-call',
      'slow_compute',
      'seconds:=0.5',
      'label:=later',
      '--detach',
    ]);
    const taskId = detached.json?.['taskId'] as string;
    expect(detached.json?.['status']).toBe('working');
    const result = await mcpc(['--json', '@fixture', 'tasks-result', taskId]);
    expect(result.json?.['content']).toEqual([{ type: 'text', text: 'Computed later in 0.5s' }]);
    expect((await mcpc(['--json', '@fixture', 'tasks-get', taskId])).json?.['status']).toBe('completed');
    // A finished task cannot be cancelled: the spec's -32602, which this client reports as an error.
    const late = await mcpc(['--json', '@fixture', 'tasks-cancel', taskId]);
    expect(late.output).toContain('-32602');

    const long = await mcpc(['--json', '@fixture', 'tools-call', 'slow_compute', 'seconds:=30', '--detach']);
    const longId = long.json?.['taskId'] as string;
    const cancel = await mcpc(['--json', '@fixture', 'tasks-cancel', longId]);
    expect(cancel.code, cancel.output).toBe(0);
    expect((await mcpc(['--json', '@fixture', 'tasks-get', longId])).json?.['status']).toBe('cancelled');
  });
});
