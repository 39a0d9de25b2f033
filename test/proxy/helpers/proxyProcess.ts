import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

import { EVERYTHING_ENTRY } from '../../client/helpers/everything.js';

export const CLI = fileURLToPath(new URL('../../../dist/src/cli/main.js', import.meta.url));
export const WIRETAP = fileURLToPath(new URL('../../fixtures/wiretap.mjs', import.meta.url));
/** Preload (NODE_OPTIONS=--import) for a gateway that collects garbage every few ms (see collectGarbage.mjs). */
export const COLLECT_GARBAGE = fileURLToPath(new URL('./collectGarbage.mjs', import.meta.url));
export const FILESYSTEM_ENTRY = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', import.meta.url),
);

/** The command line of @modelcontextprotocol/server-everything over stdio. */
export const EVERYTHING_STDIO = [process.execPath, EVERYTHING_ENTRY, 'stdio'];

export interface ProxyProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
  /** kill -9, and wait for the exit. */
  kill(): Promise<void>;
}

/** `mcp-tasks proxy …` as a child process; resolves with the URL it prints on its first line of stdout. */
export async function startProxyProcess(args: string[], env: Record<string, string> = {}): Promise<ProxyProcess> {
  const child = spawn(process.execPath, [CLI, 'proxy', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const first = stdout.split('\n')[0] as string;
      if (stdout.includes('\n')) {
        const match = /^mcp-tasks proxy: (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(first);
        if (match) resolve(match[1] as string);
        else reject(new Error(`unexpected first line: ${first}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`the proxy exited (${code}): ${stderr}`)));
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await once(child, 'exit');
  };
  return { url, child, stderr: () => stderr, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** The JSON-RPC messages a wiretapped upstream received, and its pid. */
export function wiretap(log: string): {
  pid: number | undefined;
  /** Every upstream process started so far (the gateway runs one per caller), oldest first. */
  pids: number[];
  messages: Array<Record<string, unknown>>;
} {
  if (!existsSync(log)) return { pid: undefined, pids: [], messages: [] };
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const pids: number[] = [];
  const messages: Array<Record<string, unknown>> = [];
  for (const line of lines) {
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (typeof value['pid'] === 'number') pids.push(value['pid']);
      else messages.push(value);
    } catch {
      // not JSON: skip
    }
  }
  return { pid: pids.at(-1), pids, messages };
}

/** Kills (SIGKILL) every upstream process of the log that still runs; returns their pids. */
export function killUpstreams(log: string): number[] {
  const killed: number[] = [];
  for (const pid of wiretap(log).pids) {
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // already gone
    }
  }
  return killed;
}

export async function until<T>(probe: () => T | undefined | false, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A gateway task as its SQLite store holds it, by the id its requestor knows (a SEP-1686 requestor's id is its key
 * for the task, not the stored id).
 */
export function storedTask(db: string, taskId: string): { meta: Record<string, unknown> } | undefined {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const row = sqlite
      .prepare('SELECT data FROM mcp_tasks WHERE task_id = ? OR idempotency_key = ?')
      .get(taskId, taskId) as { data: string } | undefined;
    return row && (JSON.parse(row.data) as { meta: Record<string, unknown> });
  } finally {
    sqlite.close();
  }
}
