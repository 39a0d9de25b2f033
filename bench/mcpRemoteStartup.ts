// npm run bench:mcp-remote — start-up of the mcp-remote stdio bridge (spawn to the `initialize` answer, then a
// `tools/list`) in front of the demo server and in front of @modelcontextprotocol/server-everything over Streamable
// HTTP, median of several runs each. Goal: the demo is as fast as server-everything (ratio close to 1).
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { fmt, percentile } from './measure.js';
import { startMcpRemote } from './servers/mcpRemote.js';

const RUNS = Number(process.env['RUNS'] ?? 5);
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** Spawns a server and resolves once `ready` matches its output. */
async function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (ready.test(seen)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${seen}`)));
  });
  return child;
}

/** Start-up times in ms: until `initialize` answered, and until the first `tools/list` answered. */
async function measure(url: string): Promise<{ init: number; list: number }> {
  const inits: number[] = [];
  const lists: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const remote = await startMcpRemote(url);
    await remote.request('tools/list');
    lists.push(performance.now() - started);
    inits.push(remote.startupMs);
    await remote.close();
  }
  return { init: percentile(inits, 50), list: percentile(lists, 50) };
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-remote-'));
const demoPort = await freePort();
const everythingPort = await freePort();
const demo = await start(
  [fileURLToPath(new URL('../examples/demo/server.js', import.meta.url))],
  { PORT: String(demoPort), MCP_TASKS_STORE: join(dir, 'demo.db'), LOG_LEVEL: 'warn' },
  /Try it/,
);
const everything = await start([EVERYTHING, 'streamableHttp'], { PORT: String(everythingPort) }, /listening on port/);
try {
  const ours = await measure(`http://127.0.0.1:${demoPort}/mcp`);
  const theirs = await measure(`http://127.0.0.1:${everythingPort}/mcp`);
  console.log(`mcp-remote start-up, median of ${RUNS} runs (spawn → initialize answered / → tools/list answered):`);
  console.log(`  demo server (mcp-tasks):  ${fmt(ours.init)} ms / ${fmt(ours.list)} ms`);
  console.log(`  server-everything:        ${fmt(theirs.init)} ms / ${fmt(theirs.list)} ms`);
  console.log(`  ratio demo / everything:  ${fmt(ours.init / theirs.init, 2)} / ${fmt(ours.list / theirs.list, 2)}`);
} finally {
  demo.kill('SIGTERM');
  everything.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
