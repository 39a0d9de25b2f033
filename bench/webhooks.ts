// `npm run bench:webhooks`: webhook delivery from the store's outbox to a receiver on 127.0.0.1.
//  1. first-attempt latency, publish → the receiver has the request, one event at a time: the delivering process is the
//     publishing one (it is woken at once), then another process sharing the SQLite file (it polls every 50 ms);
//  2. a kill -9 of the delivering process mid-delivery: events lost (must be 0) and duplicates (repeats of a
//     webhook-id the killed process held, delivered again by the next one).
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CallbackPolicy } from '../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../src/events/webhooks/OutboxWebhookDeliveries.js';
import type { WebhookEvent } from '../src/events/webhooks/WebhookDeliveries.js';
import { verifyWebhook } from '../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../src/events/webhooks/webhookSecret.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { fmt, percentile } from './measure.js';

const ROUNDS = Number(process.env['BENCH_WEBHOOK_ROUNDS'] ?? 300);
const CRASH_EVENTS = Number(process.env['BENCH_WEBHOOK_CRASH_EVENTS'] ?? 300);
const TYPE = 'io.github.mcp-tasks.task_status';
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-webhooks-'));
const now = () => performance.timeOrigin + performance.now();

// ---- the host's endpoint ----------------------------------------------------------------------------------------
interface Hit {
  id: string;
  answered: boolean;
}
const hits: Hit[] = [];
const arrivals = new Map<string, (at: number) => void>();
let hang = 0;
let secret = generateWebhookSecret();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = now();
    const delivery = verifyWebhook(req.headers as IncomingHttpHeaders, Buffer.concat(chunks), secret);
    const payload = delivery.payload as { type?: string; challenge?: string };
    if (payload.type === 'verification') return res.end(JSON.stringify({ challenge: payload.challenge }));
    const hit = { id: delivery.id, answered: hang === 0 };
    hits.push(hit);
    arrivals.get(delivery.id)?.(at);
    if (hang > 0) {
      hang--;
      return; // never answered: the process dies holding it
    }
    res.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const origin = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

const event = (run: string, n: number): WebhookEvent => ({
  occurrence: { eventId: `${run}:${n}`, name: TYPE, timestamp: new Date().toISOString(), data: { n } },
  owner: 'bench',
  scope: run,
  cursor: `${run}.${n + 1}`,
});

async function open(run: string) {
  const store = new SqliteStore({ path: join(dir, `${run}.db`) });
  await store.init();
  await store.webhooks.init();
  const webhooks = new OutboxWebhookDeliveries({
    store: store.webhooks,
    policy: new CallbackPolicy({ allowOrigins: [origin] }),
  });
  secret = generateWebhookSecret();
  await webhooks.subscribe({
    owner: 'bench',
    name: TYPE,
    arguments: { taskId: run },
    url: `${origin}/hooks`,
    secret,
    cursor: null,
    scope: run,
  });
  return { store, webhooks, path: join(dir, `${run}.db`) };
}

async function deliverer(path: string, leaseMs: number): Promise<ChildProcess> {
  const child = fork(fileURLToPath(new URL('./webhooksDeliverer.js', import.meta.url)), [
    path,
    origin,
    String(leaseMs),
  ]);
  await once(child, 'message');
  return child;
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

async function latency(run: string, webhooks: OutboxWebhookDeliveries): Promise<number[]> {
  const sample: number[] = [];
  for (let n = 0; n < ROUNDS; n++) {
    const arrived = new Promise<number>((resolve) => arrivals.set(`${run}:${n}`, resolve));
    const started = now();
    await webhooks.publish(event(run, n));
    sample.push((await arrived) - started);
  }
  return sample;
}

const line = (label: string, sample: number[]) =>
  console.log(
    `${label.padEnd(46)} p50 ${fmt(percentile(sample, 50), 1)} ms   p99 ${fmt(percentile(sample, 99), 1)} ms   (n=${sample.length})`,
  );

try {
  console.log(`webhook delivery, SQLite outbox, receiver on 127.0.0.1 (Node ${process.version})`);
  {
    const { store, webhooks } = await open('same');
    webhooks.start();
    line('first attempt, delivered by the publishing process', await latency('same', webhooks));
    await webhooks.stop();
    await store.close();
  }
  {
    const { store, webhooks, path } = await open('other');
    const child = await deliverer(path, 30_000);
    line('first attempt, delivered by another process', await latency('other', webhooks));
    await kill9(child);
    await store.close();
  }
  {
    const run = 'crash';
    const { store, webhooks, path } = await open(run);
    hits.length = 0;
    hang = 8;
    for (let n = 0; n < CRASH_EVENTS; n++) await webhooks.publish(event(run, n));
    const first = await deliverer(path, 1_500);
    while (hits.length < CRASH_EVENTS / 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await kill9(first);
    const killedAfter = hits.length;
    const started = now();
    const second = await deliverer(path, 1_500);
    const acknowledged = () => new Set(hits.filter((h) => h.answered).map((h) => h.id));
    while (acknowledged().size < CRASH_EVENTS && now() - started < 60_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const expected = new Set(Array.from({ length: CRASH_EVENTS }, (_, n) => `${run}:${n}`));
    const lost = [...expected].filter((id) => !acknowledged().has(id)).length;
    const foreign = hits.filter((h) => !expected.has(h.id)).length;
    console.log(
      `kill -9 mid-delivery: ${CRASH_EVENTS} events, killed after ${killedAfter} requests (8 left unanswered); ` +
        `lost ${lost}, duplicates ${hits.length - new Set(hits.map((h) => h.id)).size} ` +
        `(all repeats of a webhook-id: ${foreign === 0 ? 'yes' : 'NO'}), all delivered ${fmt(now() - started)} ms after the restart`,
    );
    await kill9(second);
    await store.close();
    if (lost > 0 || foreign > 0) process.exitCode = 1;
  }
} finally {
  receiver.closeAllConnections();
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
