// npm run bench:soak [-- --minutes 5] — well-behaved clients side by side with hostile ones against one fixture server
// (HTTP, SQLite store, two authenticated principals and anonymous callers). A benchmark, not a test: it prints figures
// and the goals they are held to, and exits 0 either way.
//   well-behaved: alice and bob (bearer tokens), two sessions each, creating tasks, polling tasks/get at the advertised
//   pollInterval, fetching results, answering a confirm_delete question through the blocking tasks/result.
//   hostile (from the second fifth of the run on): a tasks/get flood with guessed ids, streams never read, huge
//   arguments, a stream of new sessions never closed, and mallory trying the ids of alice's and bob's tasks.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { fmt, percentile } from './measure.js';
import { SoakPeer, type Answer } from './soakPeer.js';
import { listeningUrl } from './listeningUrl.js';

const FIXTURE = fileURLToPath(new URL('../examples/conformance/server.js', import.meta.url));
const minutesFlag = process.argv.indexOf('--minutes');
const MINUTES = minutesFlag >= 0 ? Number(process.argv[minutesFlag + 1]) : 5;
const TOTAL_MS = MINUTES * 60_000;
const BASELINE_MS = TOTAL_MS / 5;
const TOKENS = { alice: 'soak-alice', bob: 'soak-bob', mallory: 'soak-mallory' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Server RSS in MB, from /proc. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

async function startServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-soak-'));
  const child = spawn(process.execPath, [FIXTURE], {
    env: {
      ...process.env,
      PORT: '0',
      MCP_TASKS_STORE: join(dir, 'tasks.db'),
      MCP_TASKS_TEST_TOKENS: Object.entries(TOKENS)
        .map(([name, token]) => `${token}:${name}`)
        .join(','),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listeningUrl(child);
  return {
    url,
    pid: child.pid as number,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Tally {
  lifecycles: Array<{ at: number; ms: number }>;
  problems: string[];
  /** Ids of tasks of the well-behaved, for mallory to try. */
  knownIds: string[];
}

/** One well-behaved client: lifecycles one after the other until `until`. */
async function wellBehaved(url: string, token: string, tally: Tally, until: number): Promise<void> {
  const peer = new SoakPeer(url, { authorization: `Bearer ${token}` });
  peer.onServerRequest = (request) =>
    request.method === 'elicitation/create' ? { action: 'accept', content: { confirm: true } } : {};
  const note = (what: string, answer: Answer) => {
    tally.problems.push(`${what}: HTTP ${answer.status} ${answer.error?.code ?? ''} ${answer.error?.message ?? ''}`);
  };
  const init = await peer.initialize();
  if (!init.result) return note('initialize', init);
  for (let round = 0; Date.now() < until; round++) {
    const started = Date.now();
    const asks = round % 3 === 2;
    const created = await peer.request('tools/call', {
      name: asks ? 'confirm_delete' : 'slow_compute',
      arguments: asks ? { filename: `f${round}` } : { seconds: 0.3, label: `r${round}` },
      task: { ttl: 600_000 },
    });
    const task = created.result?.['task'] as { taskId: string; pollInterval?: number } | undefined;
    if (!task) {
      note('create', created);
      await sleep(500);
      continue;
    }
    tally.knownIds.push(task.taskId);
    if (tally.knownIds.length > 200) tally.knownIds.shift();
    if (!asks) {
      // Polls at the advertised interval until the task is terminal.
      for (;;) {
        await sleep(task.pollInterval ?? 1000);
        const got = await peer.request('tasks/get', { taskId: task.taskId });
        if (!got.result) {
          note('tasks/get', got);
          break;
        }
        if (got.result['status'] !== 'working') break;
      }
    }
    const result = await peer.request('tasks/result', { taskId: task.taskId });
    const text = ((result.result?.['content'] as Array<{ text?: string }> | undefined) ?? [])[0]?.text ?? '';
    if (!result.result || !(asks ? text.startsWith('Deleted') : text.startsWith('Computed'))) {
      note('tasks/result', result);
      continue;
    }
    tally.lifecycles.push({ at: started, ms: Date.now() - started });
  }
}

interface Hostile {
  requests: number;
  crossOwnerSuccesses: number;
  crossOwnerTries: number;
}

/** Runs `body` in a loop until `until`, ignoring its failures (hostile traffic is refused, as it should be). */
async function loop(until: number, body: () => Promise<unknown>): Promise<void> {
  while (Date.now() < until) await body().catch(() => {});
}

function hostileLoad(url: string, tally: Tally, until: number, counts: Hostile): Array<Promise<void>> {
  const guesser = new SoakPeer(url, { authorization: `Bearer ${TOKENS.mallory}` });
  const anonymous = new SoakPeer(url);
  const flood = async () => {
    counts.requests++;
    await anonymous.request('tasks/get', { taskId: crypto.randomUUID() });
  };
  const never: Array<() => void> = [];
  const neverRead = async () => {
    // A POST of a progress-reporting call whose answer is never read; the socket stays open.
    const peer = new SoakPeer(url);
    await peer.initialize();
    await new Promise<void>((resolve) => {
      const request = httpRequest(
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': peer.sessionId as string,
            'mcp-protocol-version': '2025-11-25',
          },
        },
        (response) => {
          response.pause();
          never.push(() => response.destroy());
          resolve();
        },
      );
      request.on('error', () => resolve());
      request.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 20 }, _meta: { progressToken: 'p' } },
        }),
      );
    });
    counts.requests++;
    await sleep(1000);
  };
  const huge = async () => {
    counts.requests++;
    await anonymous.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'x'.repeat(3 * 1024 * 1024) },
      task: {},
    });
    await sleep(200);
  };
  const sessions = async () => {
    counts.requests++;
    await new SoakPeer(url).initialize();
    await sleep(20);
  };
  const crossOwner = async () => {
    const taskId = tally.knownIds[Math.floor(Math.random() * tally.knownIds.length)];
    if (!taskId) return sleep(100);
    for (const peer of [guesser, anonymous]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        counts.crossOwnerTries++;
        counts.requests++;
        const answer = await peer.request(method, { taskId }, AbortSignal.timeout(5000)).catch(() => undefined);
        if (answer?.result) counts.crossOwnerSuccesses++;
      }
    }
    await sleep(50);
  };
  return [
    guesser.initialize().then(() => {}),
    loop(until, flood),
    loop(until, flood),
    loop(until, neverRead),
    loop(until, huge),
    loop(until, sessions),
    loop(until, crossOwner),
  ].map((work) => work.finally(() => void never.splice(0).forEach((destroy) => destroy())));
}

const server = await startServer();
console.log(`soak: ${MINUTES} min against ${server.url} (pid ${server.pid}); hostile load from ${MINUTES / 5} min on`);
const begin = Date.now();
const end = begin + TOTAL_MS;
const hostileFrom = begin + BASELINE_MS;
const tally: Tally = { lifecycles: [], problems: [], knownIds: [] };
const counts: Hostile = { requests: 0, crossOwnerSuccesses: 0, crossOwnerTries: 0 };
const rss: Record<string, number> = {};
const sampler = (async () => {
  await sleep(5000);
  rss['start'] = rssMb(server.pid);
  await sleep(Math.max(0, hostileFrom + (end - hostileFrom) / 2 - Date.now()));
  rss['middle'] = rssMb(server.pid);
  await sleep(Math.max(0, end - 2000 - Date.now()));
  rss['end'] = rssMb(server.pid);
})();
const clients = [TOKENS.alice, TOKENS.alice, TOKENS.bob, TOKENS.bob].map((token) =>
  wellBehaved(server.url, token, tally, end),
);
await sleep(BASELINE_MS);
const hostile = hostileLoad(server.url, tally, end, counts);
await Promise.all([...clients, ...hostile, sampler]);
await server.stop();

const quiet = tally.lifecycles.filter((l) => l.at < hostileFrom).map((l) => l.ms);
const loaded = tally.lifecycles.filter((l) => l.at >= hostileFrom).map((l) => l.ms);
const p = (sample: number[], q: number) => fmt(percentile(sample, q));
console.log(`well-behaved lifecycles: ${quiet.length} without hostile load, ${loaded.length} with`);
console.log(`  p50 / p99 without: ${p(quiet, 50)} / ${p(quiet, 99)} ms; with: ${p(loaded, 50)} / ${p(loaded, 99)} ms`);
console.log(`  p99 ratio with/without: ${fmt(percentile(loaded, 99) / percentile(quiet, 99), 2)} (goal ≤ 2)`);
console.log(`refusals and errors seen by well-behaved clients: ${tally.problems.length} (goal 0)`);
for (const problem of [...new Set(tally.problems)].slice(0, 10)) console.log(`  ${problem}`);
console.log(
  `server RSS: start ${fmt(rss['start'] ?? NaN)} MB, middle ${fmt(rss['middle'] ?? NaN)} MB, end ${fmt(rss['end'] ?? NaN)} MB; end/middle ${fmt((rss['end'] ?? NaN) / (rss['middle'] ?? NaN), 2)} (goal ≤ 1.1)`,
);
console.log(
  `hostile requests: ${counts.requests}; cross-owner accesses that succeeded: ${counts.crossOwnerSuccesses} of ${counts.crossOwnerTries} (goal 0)`,
);
