// npm run bench:v1 — on one server over Streamable HTTP: tasks/get throughput against a bare ping on the same
// connection (goal ratio >= 0.9), and the delay from a tool's completion to the tasks/result response (goal p50 < 5 ms);
// the same two figures for an equivalent server on SDK 1.32's experimental tasks, side by side.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { HttpSession, preciseNow } from './httpSession.js';
import { fmt, opsPerSecond, percentile } from './measure.js';

const SAMPLES = 40;

async function start(script: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { child, url };
}

interface Figures {
  ping: number;
  get: number;
  p50: number;
  p99: number;
}

async function measure(url: string): Promise<Figures> {
  const session = new HttpSession(url);
  await session.initialize();
  const created = await session.request('tools/call', { name: 'complete_at', arguments: { at: Date.now() }, task: {} });
  const taskId = (created['task'] as { taskId: string }).taskId;
  const ping = await opsPerSecond(() => session.request('ping'), 2000);
  const get = await opsPerSecond(() => session.request('tasks/get', { taskId }), 2000);
  const delays: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const at = Date.now() + 150 + Math.floor(Math.random() * 100);
    const task = await session.request('tools/call', { name: 'complete_at', arguments: { at }, task: {} });
    const result = await session.request('tasks/result', { taskId: (task['task'] as { taskId: string }).taskId });
    delays.push(preciseNow() - (result['structuredContent'] as { completedAt: number }).completedAt);
  }
  return { ping, get, p50: percentile(delays, 50), p99: percentile(delays, 99) };
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-v1-'));
const rows: Array<[string, Figures]> = [];
try {
  for (const [name, script, env] of [
    ['mcp-tasks (memory store)', './servers/mcpTasksServer.js', { MCP_TASKS_STORE: 'memory' }],
    ['mcp-tasks (SQLite store)', './servers/mcpTasksServer.js', { MCP_TASKS_STORE: join(dir, 'bench.db') }],
    ['SDK 1.32 experimental tasks (in-memory)', './servers/sdkV1TaskServer.js', {}],
  ] as const) {
    const server = await start(script, env);
    try {
      rows.push([name, await measure(server.url)]);
    } finally {
      server.child.kill('SIGTERM');
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log('2025-11-25 tasks over Streamable HTTP, one session, sequential requests\n');
console.log(
  'server                                      ping/s  tasks/get/s  get/ping   completion→tasks/result p50    p99',
);
for (const [name, f] of rows) {
  console.log(
    `${name.padEnd(40)} ${fmt(f.ping).padStart(8)} ${fmt(f.get).padStart(12)} ${fmt(f.get / f.ping, 2).padStart(9)}   ${fmt(f.p50, 1).padStart(23)} ms ${fmt(f.p99, 1).padStart(6)} ms`,
  );
}
const ours = rows[0]?.[1] as Figures;
const sdk = rows[2]?.[1] as Figures;
console.log(
  `\ngoals: get/ping >= 0.90 (mcp-tasks memory: ${fmt(ours.get / ours.ping, 2)}); completion delay p50 < 5 ms (mcp-tasks memory: ${fmt(ours.p50, 1)} ms)`,
);
console.log(
  `mcp-tasks vs SDK 1.32: tasks/get throughput x${fmt(ours.get / sdk.get, 2)}, completion delay p50 ${fmt(sdk.p50 / Math.max(ours.p50, 0.01), 0)}x lower`,
);
