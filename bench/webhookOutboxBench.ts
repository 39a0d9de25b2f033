// The webhook outbox scenarios shared by `npm run bench:webhooks` and `npm run bench:events`: one SQLite file per run
// with one subscription to the receiver, events published one at a time (first-attempt latency), and a kill -9 of the
// delivering process in the middle of its deliveries (events lost, duplicates).
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CallbackPolicy } from '../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../src/events/webhooks/OutboxWebhookDeliveries.js';
import type { WebhookEvent } from '../src/events/webhooks/WebhookDeliveries.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { preciseNow, WebhookReceiver } from './webhookReceiver.js';

const TYPE = 'io.github.mcp-tasks.task_status';
/** Requests the killed process is left holding, unanswered. */
const HELD = 8;

/** What a kill -9 in the middle of the deliveries left: `lost` must be 0; `foreign` repeats of no published id, 0. */
export interface CrashFigures {
  events: number;
  killedAfter: number;
  held: number;
  lost: number;
  duplicates: number;
  foreign: number;
  /** From the second process's start to every event acknowledged, ms. */
  restartMs: number;
}

export class WebhookOutboxBench {
  private constructor(
    readonly receiver: WebhookReceiver,
    private readonly dir: string,
  ) {}

  static async start(): Promise<WebhookOutboxBench> {
    return new WebhookOutboxBench(
      await WebhookReceiver.start(),
      mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-webhooks-')),
    );
  }

  /** Publish → the receiver has the request, one event at a time, delivered by the publishing process. */
  async latencySameProcess(rounds: number): Promise<number[]> {
    const { store, webhooks } = await this.open('same');
    webhooks.start();
    try {
      return await this.latency('same', webhooks, rounds);
    } finally {
      await webhooks.stop();
      await store.close();
    }
  }

  /** The same, delivered by another process sharing the SQLite file (it polls the outbox every 50 ms). */
  async latencyOtherProcess(rounds: number): Promise<number[]> {
    const { store, webhooks, path } = await this.open('other');
    const child = await this.deliverer(path, 30_000);
    try {
      return await this.latency('other', webhooks, rounds);
    } finally {
      await kill9(child);
      await store.close();
    }
  }

  /**
   * `events` published, a delivering process killed with SIGKILL once a third are delivered (holding some requests
   * unanswered), then another process delivers the rest.
   */
  async killDuringDelivery(events: number): Promise<CrashFigures> {
    const run = 'crash';
    const hits = this.receiver.hits;
    const { store, webhooks, path } = await this.open(run);
    hits.length = 0;
    this.receiver.hang = HELD;
    for (let n = 0; n < events; n++) await webhooks.publish(event(run, n));
    const first = await this.deliverer(path, 1_500);
    while (hits.length < events / 3) await sleep(5);
    await kill9(first);
    const killedAfter = hits.length;
    const started = preciseNow();
    const second = await this.deliverer(path, 1_500);
    const acknowledged = () => new Set(hits.filter((h) => h.answered).map((h) => h.id));
    while (acknowledged().size < events && preciseNow() - started < 60_000) await sleep(20);
    const restartMs = preciseNow() - started;
    await kill9(second);
    await store.close();
    const expected = new Set(Array.from({ length: events }, (_, n) => `${run}:${n}`));
    return {
      events,
      killedAfter,
      held: HELD,
      lost: [...expected].filter((id) => !acknowledged().has(id)).length,
      duplicates: hits.length - new Set(hits.map((h) => h.id)).size,
      foreign: hits.filter((h) => !expected.has(h.id)).length,
      restartMs,
    };
  }

  close(): void {
    this.receiver.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async open(run: string) {
    const path = join(this.dir, `${run}.db`);
    const store = new SqliteStore({ path });
    await store.init();
    await store.webhooks.init();
    const webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [this.receiver.origin] }),
    });
    await webhooks.subscribe({
      owner: 'bench',
      name: TYPE,
      arguments: { taskId: run },
      url: `${this.receiver.origin}/hooks`,
      secret: this.receiver.newSecret(),
      cursor: null,
      scope: run,
    });
    return { store, webhooks, path };
  }

  private async deliverer(path: string, leaseMs: number): Promise<ChildProcess> {
    const child = fork(fileURLToPath(new URL('./webhooksDeliverer.js', import.meta.url)), [
      path,
      this.receiver.origin,
      String(leaseMs),
    ]);
    await once(child, 'message');
    return child;
  }

  private async latency(run: string, webhooks: OutboxWebhookDeliveries, rounds: number): Promise<number[]> {
    const sample: number[] = [];
    for (let n = 0; n < rounds; n++) {
      const arrived = this.receiver.arrival(`${run}:${n}`);
      const started = preciseNow();
      await webhooks.publish(event(run, n));
      sample.push((await arrived).at - started);
    }
    return sample;
  }
}

function event(run: string, n: number): WebhookEvent {
  return {
    occurrence: { eventId: `${run}:${n}`, name: TYPE, timestamp: new Date().toISOString(), data: { n } },
    owner: 'bench',
    scope: run,
    cursor: `${run}.${n + 1}`,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}
