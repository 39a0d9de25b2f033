// npm run bench:volume [-- --minutes 10 --rate 50 --store sqlite|memory|both] — production volume with the default
// limits: one authenticated principal runs task lifecycles at a steady rate (create a task-augmented tools/call, then
// fetch its result with the blocking tasks/result), against the fixture server over HTTP. Without eviction of fetched
// tasks it would be refused once it held 10,000 stored tasks (200 s at 50/s). A benchmark, not a test: it prints the
// refusals (goal 0), lifecycle latency, the server's RSS and the store file's size over the run, and exits 0.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { listeningUrl } from './listeningUrl.js';
import { fmt, percentile } from './measure.js';
import { SoakPeer } from './soakPeer.js';

const FIXTURE = fileURLToPath(new URL('../examples/conformance/server.js', import.meta.url));
const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
};
const MINUTES = Number(flag('minutes', '10'));
const RATE = Number(flag('rate', '50'));
const STORES = flag('store', 'both') === 'both' ? ['sqlite', 'memory'] : [flag('store', 'both')];
/** Lifecycles under way at once at most: past it the client is behind its rate (reported), not piling up requests. */
const MAX_IN_FLIGHT = 500;
const TOKEN = 'volume-token';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

function fileMb(path: string | undefined): number {
  if (!path) return 0;
  let bytes = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // not there (yet)
    }
  }
  return bytes / 1024 / 1024;
}

interface Sample {
  at: number;
  rss: number;
  file: number;
  done: number;
}

async function run(store: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-volume-'));
  const path = store === 'sqlite' ? join(dir, 'tasks.db') : undefined;
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, PORT: '0', MCP_TASKS_STORE: path ?? 'memory', MCP_TASKS_TEST_TOKENS: `${TOKEN}:volume` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listeningUrl(child);
  const pid = child.pid as number;
  const peer = new SoakPeer(url, { authorization: `Bearer ${TOKEN}` });
  const init = await peer.initialize();
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);

  const latencies: number[] = [];
  const refusals: string[] = [];
  let behind = 0;
  let inFlight = 0;
  const lifecycle = async (i: number) => {
    const started = performance.now();
    const created = await peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: `v${i}` },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId?: string } | undefined)?.taskId;
    if (!taskId)
      return void refusals.push(`create: ${created.error?.code ?? created.status} ${created.error?.message}`);
    const result = await peer.request('tasks/result', { taskId });
    if (!result.result) return void refusals.push(`result: ${result.error?.code} ${result.error?.message}`);
    latencies.push(performance.now() - started);
  };

  const begin = performance.now();
  const total = Math.round(MINUTES * 60 * RATE);
  const samples: Sample[] = [];
  const sampler = setInterval(() => {
    samples.push({
      at: (performance.now() - begin) / 1000,
      rss: rssMb(pid),
      file: fileMb(path),
      done: latencies.length,
    });
  }, 10_000);
  const running: Array<Promise<void>> = [];
  // Open loop: lifecycle i starts at i / RATE seconds, whatever the earlier ones are doing.
  for (let i = 0; i < total; i++) {
    const due = begin + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (inFlight >= MAX_IN_FLIGHT) {
      behind++;
      continue;
    }
    inFlight++;
    const one = lifecycle(i)
      .catch((error: unknown) => void refusals.push(`transport: ${String(error)}`))
      .finally(() => inFlight--);
    running.push(one);
    if (running.length > 2000) await Promise.all(running.splice(0, 1000));
  }
  await Promise.all(running);
  clearInterval(sampler);
  const elapsed = (performance.now() - begin) / 1000;
  const last = { at: elapsed, rss: rssMb(pid), file: fileMb(path), done: latencies.length };
  samples.push(last);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });

  const max = (pick: (s: Sample) => number) => Math.max(...samples.map(pick));
  console.log(
    `\n${store}: ${fmt(latencies.length)} lifecycles in ${fmt(elapsed)} s (${fmt(latencies.length / elapsed, 1)}/s, goal ${RATE}/s)`,
  );
  console.log(`  refusals and errors: ${refusals.length} (goal 0); skipped for ${MAX_IN_FLIGHT} in flight: ${behind}`);
  for (const problem of [...new Set(refusals)].slice(0, 5)) console.log(`    ${problem}`);
  console.log(
    `  lifecycle (create + tasks/result) p50 / p99 / max: ${fmt(percentile(latencies, 50), 1)} / ${fmt(percentile(latencies, 99), 1)} / ${fmt(
      max(() => Math.max(...latencies)),
      0,
    )} ms`,
  );
  const minute = samples.filter((s, i) => i % 6 === 5 || s === last);
  console.log(`  server RSS MB by minute: ${minute.map((s) => fmt(s.rss)).join(' ')} (max ${fmt(max((s) => s.rss))})`);
  if (path)
    console.log(
      `  SQLite file MB (db + wal + shm) by minute: ${minute.map((s) => fmt(s.file, 1)).join(' ')} (max ${fmt(
        max((s) => s.file),
        1,
      )})`,
    );
}

for (const store of STORES) await run(store);
