// npm run bench:proxy — what the gateway adds: p50/p99 latency of a plain tools/call through `mcp-tasks proxy`
// against the same call made on the upstream directly (goal: p50 added <= 2 ms), and of a whole task lifecycle
// through the proxy (tools/call with a task, then tasks/result) against the direct plain call. The upstream is
// @modelcontextprotocol/server-everything over Streamable HTTP; both run as their own processes. The three are measured
// in alternation (one of each per round), so load on a shared machine weighs on every figure alike.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { HttpSession, preciseNow } from './httpSession.js';
import { fmt, percentile } from './measure.js';

const SAMPLES = 1000;
const WARMUP = 100;
const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** Starts a process and resolves with the URL it announces (matched by `pattern`) on stdout or stderr. */
async function start(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (pattern.test(chunk.toString())) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
  return child;
}

/** The latencies of each operation, measured round after round with one call of each per round. */
async function latencies(ops: Array<() => Promise<unknown>>): Promise<number[][]> {
  for (let i = 0; i < WARMUP; i++) for (const op of ops) await op();
  const samples = ops.map((): number[] => []);
  for (let i = 0; i < SAMPLES; i++) {
    for (const [index, op] of ops.entries()) {
      const begin = preciseNow();
      await op();
      samples[index]?.push(preciseNow() - begin);
    }
  }
  return samples;
}

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-proxy-'));
// Back-to-back lifecycles exceed the default task rate limit (50/s per owner), which is not what is measured here.
const config = join(dir, 'proxy.json');
writeFileSync(config, JSON.stringify({ rateLimit: false }));
try {
  const upstreamPort = await freePort();
  children.push(await start([EVERYTHING, 'streamableHttp'], /listening on port/, { PORT: String(upstreamPort) }));
  const upstream = `http://127.0.0.1:${upstreamPort}/mcp`;
  const proxyPort = await freePort();
  children.push(
    await start(
      [CLI, 'proxy', '--port', String(proxyPort), '--store', 'memory', '--config', config, '--upstream', upstream],
      /mcp-tasks proxy: http/,
    ),
  );
  const proxy = `http://127.0.0.1:${proxyPort}/mcp`;

  const direct = new HttpSession(upstream);
  await direct.initialize();
  const through = new HttpSession(proxy);
  // A host that speaks tasks (so plain calls stay plain calls, without the fallback tools).
  await through.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { tasks: {} },
    clientInfo: { name: 'mcp-tasks-bench', version: '1' },
  });
  const echo = { name: 'echo', arguments: { message: 'hello' } };

  const [directCall, proxiedCall, proxiedTask] = (await latencies([
    () => direct.request('tools/call', echo),
    () => through.request('tools/call', echo),
    async () => {
      const created = await through.request('tools/call', { ...echo, task: {} });
      await through.request('tasks/result', { taskId: (created['task'] as { taskId: string }).taskId });
    },
  ])) as [number[], number[], number[]];

  const row = (name: string, sample: number[]) =>
    `${name.padEnd(44)} p50 ${fmt(percentile(sample, 50), 2).padStart(6)} ms   p99 ${fmt(percentile(sample, 99), 2).padStart(6)} ms`;
  console.log(
    `tools/call echo over Streamable HTTP, ${SAMPLES} calls each in alternation (after ${WARMUP} warm-up rounds)`,
  );
  console.log(row('upstream directly (plain call)', directCall));
  console.log(row('through the proxy (plain call)', proxiedCall));
  console.log(row('through the proxy (task: create + tasks/result)', proxiedTask));
  const added = percentile(proxiedCall, 50) - percentile(directCall, 50);
  const addedTask = percentile(proxiedTask, 50) - percentile(directCall, 50);
  console.log(`added p50, plain call: ${fmt(added, 2)} ms (goal <= 2 ms: ${added <= 2 ? 'met' : 'NOT met'})`);
  console.log(`added p50, task lifecycle: ${fmt(addedTask, 2)} ms`);
  console.log(`ratio proxied/direct p50: plain ${fmt(percentile(proxiedCall, 50) / percentile(directCall, 50), 2)}`);
} finally {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
