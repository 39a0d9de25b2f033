// The fault scenarios of `npm run bench:faults` and test/faults/: real Redis, PostgreSQL and SQLite, real server and
// worker processes (the conformance fixture, from dist/), faults made with kill -9, SIGSTOP, pg_ctl and a full tmpfs.
// Each scenario drives lifecycles at a steady rate through the fault and counts, from the requestor's side: tasks
// lost, stuck, run twice though not retry-safe, ended with a wrong error, finished outcomes discarded, creations
// refused that ran anyway (phantoms), requests left unanswered, processes crashed, and the time to recover.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import type { TaskRecord, TaskStore } from '../src/engine/index.js';
import { PostgresStore } from '../src/stores/postgres/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { FixtureProcess, PostgresProcess, RedisProcess, sleep } from './faultServices.js';

export interface FaultCounts {
  scenario: string;
  lifecycles: number;
  acknowledged: number;
  /** Creations refused with a clear -32603 (nothing stored). */
  refused: number;
  lost: number;
  stuck: number;
  doubleRuns: number;
  wrongErrors: number;
  discarded: number;
  /** Creations refused as not created (nothing stored) that ran anyway. */
  phantoms: number;
  /**
   * Creations refused with the generic "store unavailable" (their insert was in flight when the connection dropped,
   * so whether it landed is unknown) that ran: the documented exception, reported, not a phantom.
   */
  ambiguous: number;
  unanswered: number;
  crashes: number;
  /** From the end of the fault until creations are accepted again and every earlier task has ended. */
  recoveryMs: number;
  notes: string[];
}

/** What a scenario runs on, and the processes it can hurt. */
export interface FaultRig {
  redis?: RedisProcess;
  postgres?: PostgresProcess;
  servers: FixtureProcess[];
  workers: FixtureProcess[];
  /** Starts server `index` again (after a kill), on the same store. */
  restartServer(index: number): Promise<void>;
  /** The SQLite file's directory (the SQLite scenarios). */
  dir?: string;
}

export interface FaultScenario {
  name: string;
  backend: 'redis' | 'postgres' | 'sqlite' | 'sqlite-tmpfs';
  /** What the requestor may see as a task's failure besides the tool's own (e.g. a frozen worker's lapsed lease). */
  leaseFailuresExpected?: boolean;
  /** Makes the fault; resolves when it has ended (the service back, the process thawed). */
  fault(rig: FaultRig): Promise<void>;
  /** Extra checks after the scenario, as notes ("ok" ones are not reported). */
  check?(rig: FaultRig): Promise<string[]>;
}

const LEASE_MS = 3000;
const RATE_PER_S = 10;
const BEFORE_MS = 3000;
const AFTER_MS = 5000;
/** How long the requestor waits for any answer: the creation bound (10 s) and some. */
const PATIENCE_MS = 15_000;
/** After the fault, every task must have ended within this. */
const SETTLE_MS = 30_000;
const TOOL_ERROR = /upstream service refused/;
const LEASE_LAPSED = /stopped renewing its lease/;

interface Lifecycle {
  label: string;
  retrySafe: boolean;
  sentAt: number;
  taskId?: string;
  error?: { code?: number; message: string };
  unanswered?: boolean;
  /** Failed at the transport (a server killed under the request): it may or may not have been stored. */
  transport?: boolean;
  answeredAt?: number;
}

/**
 * Recovery must end within this of the fault's end (docs/deployment.md, "Faults survived"). The scenarios' runners
 * outlive the store's outages and record their outcomes within a 1 s retry pause of its return (measured 0.2–4 s);
 * a run that really died would take a lease of steady store, a lease and the recovery interval (about 7 s with
 * `leaseMs` 3 s).
 */
export const RECOVERY_BOUND_MS = 10_000;

export const SCENARIOS: FaultScenario[] = [
  {
    name: 'redis-down-20s',
    backend: 'redis',
    async fault(rig) {
      await rig.redis!.kill();
      await sleep(20_000);
      await rig.redis!.launch();
    },
  },
  {
    name: 'redis-kill9-back-after-5s',
    backend: 'redis',
    async fault(rig) {
      await rig.redis!.kill();
      await sleep(5000);
      await rig.redis!.launch();
    },
  },
  {
    name: 'redis-frozen-10s',
    backend: 'redis',
    async fault(rig) {
      rig.redis!.signal('SIGSTOP');
      await sleep(10_000);
      rig.redis!.signal('SIGCONT');
    },
  },
  {
    name: 'postgres-stopped-10s',
    backend: 'postgres',
    async fault(rig) {
      await rig.postgres!.ctl('stop');
      await sleep(10_000);
      await rig.postgres!.ctl('start');
    },
  },
  {
    name: 'postgres-restart-immediate',
    backend: 'postgres',
    async fault(rig) {
      await rig.postgres!.ctl('restart');
    },
  },
  {
    name: 'worker-frozen-past-its-lease',
    backend: 'redis',
    leaseFailuresExpected: true,
    async fault(rig) {
      const worker = rig.workers[0]!;
      worker.signal('SIGSTOP');
      await sleep(LEASE_MS * 2);
      worker.signal('SIGCONT');
    },
  },
  {
    name: 'server-killed-with-tasks-waiting-for-a-slot',
    backend: 'sqlite',
    // Tasks that had started when the server died are failed (not retry-safe) or re-run: the right outcome for them.
    leaseFailuresExpected: true,
    async fault(rig) {
      await rig.servers[0]!.stop(true);
      await sleep(1000);
      await rig.restartServer(0);
    },
  },
  {
    name: 'sqlite-disk-full',
    backend: 'sqlite-tmpfs',
    async fault(rig) {
      const filler = join(rig.dir!, 'filler');
      // Fills the file system: dd stops at ENOSPC.
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
      await sleep(5000);
      rmSync(filler);
    },
    async check(rig) {
      const db = new Database(join(rig.dir!, 'tasks.db'), { readonly: true });
      try {
        const result = db.pragma('integrity_check', { simple: true });
        return result === 'ok' ? [] : [`integrity_check: ${String(result)}`];
      } finally {
        db.close();
      }
    },
  },
];

/** Whether this machine can run `scenario` (its service binaries; a tmpfs mount needs root). */
export function unavailableReason(scenario: FaultScenario): string | undefined {
  if (scenario.backend === 'redis' && spawnSync('redis-server', ['--version']).status !== 0) return 'no redis-server';
  if (scenario.backend === 'postgres' && !PostgresProcess.available()) return 'no initdb/pg_ctl';
  if (scenario.backend !== 'sqlite' && spawnSync('redis-server', ['--version']).status !== 0) return 'no redis-server';
  if (scenario.backend === 'sqlite-tmpfs' && process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  return undefined;
}

/** Runs one scenario from a fresh rig to its counts. */
export async function runScenario(scenario: FaultScenario): Promise<FaultCounts> {
  const rig = await buildRig(scenario);
  const lifecycles: Lifecycle[] = [];
  const sessions = new Map<number, string>();
  let driving = true;
  const driver = (async () => {
    for (let i = 0; driving; i++) {
      const lifecycle: Lifecycle = { label: `${scenario.name}-${i}`, retrySafe: i % 2 === 0, sentAt: Date.now() };
      lifecycles.push(lifecycle);
      void create(rig.rig, sessions, lifecycle);
      await sleep(1000 / RATE_PER_S);
    }
  })();
  let faultEnd = 0;
  const notes: string[] = [];
  try {
    await sleep(BEFORE_MS);
    await scenario.fault(rig.rig);
    faultEnd = Date.now();
    await sleep(AFTER_MS);
    driving = false;
    await driver;
    // Every creation answered (or given up on by the requestor).
    const answerDeadline = Date.now() + PATIENCE_MS + 1000;
    while (lifecycles.some((l) => !l.answeredAt) && Date.now() < answerDeadline) await sleep(100);
    const ends = await settle(rig.rig, sessions, lifecycles, faultEnd + SETTLE_MS);
    const counts = await count(scenario, rig, lifecycles, ends, faultEnd);
    if (scenario.check) counts.notes.push(...(await scenario.check(rig.rig)));
    counts.notes.push(...notes);
    return counts;
  } finally {
    driving = false;
    await rig.close();
  }
}

interface BuiltRig {
  rig: FaultRig;
  toolEvents: string;
  store(): TaskStore;
  close(): Promise<void>;
}

async function buildRig(scenario: FaultScenario): Promise<BuiltRig> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-faults-'));
  const toolEvents = join(dir, 'tool-events.jsonl');
  writeFileSync(toolEvents, '');
  const rig: FaultRig = { servers: [], workers: [], restartServer: async () => {} };
  let storeUrl: string;
  let mounted: string | undefined;
  const closers: Array<() => Promise<void>> = [];
  if (scenario.backend === 'sqlite' || scenario.backend === 'sqlite-tmpfs') {
    const dbDir = join(dir, 'db');
    mkdirSync(dbDir);
    if (scenario.backend === 'sqlite-tmpfs') {
      const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dbDir], { encoding: 'utf8' });
      if (mount.status !== 0) throw new Error(`cannot mount a tmpfs: ${mount.stderr}`);
      mounted = dbDir;
    }
    rig.dir = dbDir;
    storeUrl = join(dbDir, 'tasks.db');
  } else {
    rig.redis = await RedisProcess.start();
    closers.push(() => rig.redis!.kill());
    if (scenario.backend === 'postgres') {
      rig.postgres = await PostgresProcess.start();
      closers.push(() => rig.postgres!.stop());
      storeUrl = rig.postgres.url;
    } else {
      storeUrl = `${rig.redis.url}/0`;
    }
  }
  const queued = rig.redis !== undefined;
  const env: Record<string, string> = {
    MCP_TASKS_STORE: storeUrl,
    MCP_TASKS_LEASE_MS: String(LEASE_MS),
    MCP_TASKS_TOOL_EVENTS: toolEvents,
    MCP_TASKS_MAX_ACTIVE: '100000',
    MCP_TASKS_MAX_STORED: '100000',
    ...(queued
      ? { MCP_TASKS_EXECUTOR: 'queue', REDIS_URL: rig.redis!.url, MCP_TASKS_QUEUE: 'faults' }
      : // In-process: few slots, so tasks wait for one (leased, never started) when the server dies.
        { MCP_TASKS_TOOL_CONCURRENCY: 'slow_compute:2,protocol_error_job:2' }),
  };
  rig.servers.push(await FixtureProcess.server(env));
  rig.restartServer = async (index) => {
    rig.servers[index] = await FixtureProcess.server(env);
  };
  if (queued) for (let i = 0; i < 2; i++) rig.workers.push(await FixtureProcess.worker(env));
  let opened: TaskStore | undefined;
  return {
    rig,
    toolEvents,
    store() {
      opened ??=
        scenario.backend === 'postgres'
          ? new PostgresStore({ connectionString: storeUrl })
          : queued
            ? new RedisStore({ url: storeUrl })
            : new SqliteStore({ path: storeUrl });
      return opened;
    },
    async close() {
      await opened?.close().catch(() => {});
      for (const process of [...rig.servers, ...rig.workers]) await process.stop();
      for (const close of closers.reverse()) await close().catch(() => {});
      if (mounted) spawnSync('umount', ['-l', mounted]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The requestor: one JSON-RPC request over Streamable HTTP, with its patience; a lost session is made again. */
async function rpc(
  rig: FaultRig,
  sessions: Map<number, string>,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code?: number; message: string }; transport?: boolean }> {
  const index = 0;
  const server = rig.servers[index]!;
  try {
    let session = sessions.get(index);
    if (!session || !session.startsWith(server.url)) {
      session = `${server.url} ${await initialize(server.url)}`;
      sessions.set(index, session);
    }
    const id = session.split(' ')[1] as string;
    const response = await fetch(server.url, {
      method: 'POST',
      signal: AbortSignal.timeout(PATIENCE_MS),
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    if (response.status === 404) sessions.delete(index);
    const message = parse(await response.text());
    if (!message) return { error: { message: `HTTP ${response.status}` }, transport: true };
    if (message['error']) return { error: message['error'] as { code: number; message: string } };
    return { result: message['result'] as Record<string, unknown> };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return { error: { message: String(error) }, transport: !timedOut, ...(timedOut && { transport: false }) };
  }
}

async function initialize(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    signal: AbortSignal.timeout(PATIENCE_MS),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'faults', version: '1' } },
    }),
  });
  const id = response.headers.get('mcp-session-id') ?? '';
  await response.text();
  await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.text());
  return id;
}

function parse(text: string): Record<string, unknown> | undefined {
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:') && line.slice(5).trim())
    .map((line) => line.slice(5));
  const body = data.length > 0 ? data[data.length - 1] : text;
  try {
    return body ? (JSON.parse(body) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function create(rig: FaultRig, sessions: Map<number, string>, lifecycle: Lifecycle): Promise<void> {
  const call = lifecycle.retrySafe
    ? { name: 'slow_compute', arguments: { seconds: 0.5, label: lifecycle.label } }
    : { name: 'protocol_error_job', arguments: {} };
  const answer = await rpc(rig, sessions, 'tools/call', { ...call, task: {} });
  lifecycle.answeredAt = Date.now();
  if (answer.result) lifecycle.taskId = (answer.result['task'] as { taskId: string }).taskId;
  else if (answer.transport) lifecycle.transport = true;
  else if (answer.error?.message.startsWith('TimeoutError') || answer.error?.message.includes('timeout'))
    lifecycle.unanswered = true;
  else lifecycle.error = answer.error as { code?: number; message: string };
}

interface TaskEnd {
  status: string;
  statusMessage?: string;
  endedAt: number;
  missing?: boolean;
}

/** Polls every acknowledged task until it ends (or the deadline passes). */
async function settle(
  rig: FaultRig,
  sessions: Map<number, string>,
  lifecycles: Lifecycle[],
  deadline: number,
): Promise<Map<string, TaskEnd>> {
  const ends = new Map<string, TaskEnd>();
  const open = () => lifecycles.filter((l) => l.taskId && !ends.has(l.taskId));
  while (open().length > 0 && Date.now() < deadline) {
    for (const lifecycle of open()) {
      const answer = await rpc(rig, sessions, 'tasks/get', { taskId: lifecycle.taskId });
      const task = answer.result;
      if (answer.error?.code === -32602) ends.set(lifecycle.taskId!, { status: 'missing', endedAt: 0, missing: true });
      if (!task || !['completed', 'failed', 'cancelled'].includes(String(task['status']))) continue;
      ends.set(lifecycle.taskId!, {
        status: String(task['status']),
        ...(typeof task['statusMessage'] === 'string' && { statusMessage: task['statusMessage'] }),
        endedAt: Date.parse(String(task['lastUpdatedAt'])),
      });
    }
    await sleep(200);
  }
  return ends;
}

async function count(
  scenario: FaultScenario,
  built: BuiltRig,
  lifecycles: Lifecycle[],
  ends: Map<string, TaskEnd>,
  faultEnd: number,
): Promise<FaultCounts> {
  const events = readFileSync(built.toolEvents, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string; arguments: Record<string, unknown> });
  const eventsOf = (label: string) => events.filter((e) => e.arguments['label'] === label);
  const counts: FaultCounts = {
    scenario: scenario.name,
    lifecycles: lifecycles.length,
    acknowledged: 0,
    refused: 0,
    lost: 0,
    stuck: 0,
    doubleRuns: 0,
    wrongErrors: 0,
    discarded: 0,
    phantoms: 0,
    ambiguous: 0,
    unanswered: 0,
    crashes: [...built.rig.servers, ...built.rig.workers].filter((p) => p.crashed).length,
    recoveryMs: 0,
    notes: [],
  };
  const note = (text: string) => {
    if (counts.notes.length < 8) counts.notes.push(text);
  };
  let lastRefusal = faultEnd;
  let lastEnd = faultEnd;
  const store = built.store();
  await store.init();
  for (const lifecycle of lifecycles) {
    if (lifecycle.unanswered) {
      counts.unanswered += 1;
      note(`${lifecycle.label}: no answer within ${PATIENCE_MS} ms`);
      continue;
    }
    if (!lifecycle.taskId) {
      if (lifecycle.transport) continue;
      lastRefusal = Math.max(lastRefusal, lifecycle.answeredAt ?? 0);
      const clear =
        lifecycle.error?.code === -32603 && /not created|nothing was stored|unavailable/.test(lifecycle.error.message);
      if (clear) counts.refused += 1;
      else {
        counts.wrongErrors += 1;
        note(`${lifecycle.label}: creation refused unclearly: ${JSON.stringify(lifecycle.error)}`);
      }
      // A refused creation must not run.
      if (lifecycle.retrySafe && eventsOf(lifecycle.label).some((e) => e.event === 'start')) {
        if (/not created|nothing was stored/.test(lifecycle.error?.message ?? '')) {
          counts.phantoms += 1;
          note(`${lifecycle.label}: refused as not created, yet it ran`);
        } else {
          // Reported on the bench's line; the requestor was not told it was not created.
          counts.ambiguous += 1;
        }
      }
      continue;
    }
    counts.acknowledged += 1;
    const end = ends.get(lifecycle.taskId);
    if (!end) {
      counts.stuck += 1;
      note(`${lifecycle.label}: not ended ${SETTLE_MS} ms after the fault`);
      continue;
    }
    if (end.missing) {
      counts.lost += 1;
      note(`${lifecycle.label}: acknowledged, then not found`);
      continue;
    }
    if (lifecycle.sentAt <= faultEnd) lastEnd = Math.max(lastEnd, end.endedAt);
    const record: TaskRecord | undefined = await store.get(lifecycle.taskId);
    if (lifecycle.retrySafe) {
      if (end.status === 'completed') continue;
      const finished = eventsOf(lifecycle.label).some((e) => e.event === 'end');
      if (finished) counts.discarded += 1;
      else counts.wrongErrors += 1;
      note(
        `${lifecycle.label}: ${end.status}: ${end.statusMessage ?? ''}${finished ? ' (its tool had returned)' : ''}`,
      );
      continue;
    }
    if ((record?.attempts ?? 0) > 1) {
      counts.doubleRuns += 1;
      note(`${lifecycle.label}: not retry-safe, run ${record?.attempts} times`);
    }
    const expected =
      TOOL_ERROR.test(end.statusMessage ?? '') ||
      // A lapsed lease is the right message only for a run that had started, where the scenario stops runners.
      (scenario.leaseFailuresExpected === true &&
        LEASE_LAPSED.test(end.statusMessage ?? '') &&
        (record?.attempts ?? 0) > 0);
    if (end.status !== 'failed' || !expected) {
      counts.wrongErrors += 1;
      note(`${lifecycle.label}: ${end.status}: ${end.statusMessage ?? ''} (attempts ${record?.attempts})`);
    }
  }
  counts.recoveryMs = Math.max(0, lastRefusal - faultEnd, lastEnd - faultEnd);
  return counts;
}

/** A line per scenario for the bench's report. */
export function formatCounts(c: FaultCounts): string {
  return (
    `${c.scenario.padEnd(46)} lifecycles ${String(c.lifecycles).padStart(4)}  acknowledged ${String(c.acknowledged).padStart(4)}` +
    `  refused ${String(c.refused).padStart(3)}  lost ${c.lost}  stuck ${c.stuck}  double runs ${c.doubleRuns}` +
    `  wrong errors ${c.wrongErrors}  discarded ${c.discarded}  phantoms ${c.phantoms} (in-flight ${c.ambiguous})  unanswered ${c.unanswered}` +
    `  crashes ${c.crashes}  recovery ${(c.recoveryMs / 1000).toFixed(1)} s`
  );
}

export function appendReport(path: string, counts: FaultCounts): void {
  if (existsSync(path)) appendFileSync(path, `${JSON.stringify(counts)}\n`);
}
