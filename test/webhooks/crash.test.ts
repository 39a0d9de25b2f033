import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { TaskStore } from '../../src/engine/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import type { WebhookEvent } from '../../src/events/webhooks/WebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const deliverer = fileURLToPath(new URL('./fixtures/deliverer.mjs', import.meta.url));
const ender = fileURLToPath(new URL('./fixtures/ender.mjs', import.meta.url));
const built = existsSync(fileURLToPath(new URL('../../dist/src/events/webhooks/WebhookSender.js', import.meta.url)));
const TYPE = 'io.github.mcp-tasks.task_status';

interface Backend {
  name: string;
  open(): Promise<{ store: TaskStore; args: string[] }>;
}

const pgUrl = process.env['MCP_TASKS_TEST_POSTGRES_URL'];
const redisUrl = process.env['MCP_TASKS_TEST_REDIS_URL'];
const schemas: string[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  if (pgUrl && schemas.length > 0) {
    const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
  if (redisUrl && prefixes.length > 0) {
    const admin = new Redis(redisUrl);
    for (const prefix of prefixes) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
    await admin.quit();
  }
});

const backends: Backend[] = [
  {
    name: 'sqlite',
    async open() {
      const path = join(tempDir(), 'webhooks.db');
      return { store: new SqliteStore({ path }), args: ['sqlite', path, '-'] };
    },
  },
  ...(pgUrl
    ? [
        {
          name: 'postgres',
          async open() {
            const schema = `mcp_tasks_wh_${randomUUID().replace(/-/g, '')}`;
            schemas.push(schema);
            return {
              store: new PostgresStore({ connectionString: pgUrl, schema, poolSize: 4 }),
              args: ['postgres', pgUrl, schema],
            };
          },
        },
      ]
    : []),
  ...(redisUrl
    ? [
        {
          name: 'redis',
          async open() {
            const prefix = `mcp-tasks-wh:${randomUUID()}:`;
            prefixes.push(prefix);
            return { store: new RedisStore({ url: redisUrl, keyPrefix: prefix }), args: ['redis', redisUrl, prefix] };
          },
        },
      ]
    : []),
];

const event = (n: number): WebhookEvent => ({
  occurrence: { eventId: `t-1:${n}`, name: TYPE, timestamp: new Date(1_000 + n).toISOString(), data: { n } },
  owner: 'alice',
  scope: 't-1',
  cursor: `c${n + 1}`,
});

const children: ChildProcess[] = [];

async function startDeliverer(
  args: string[],
  origin: string,
  leaseMs: number,
  fixture = deliverer,
  says = 'ready',
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fixture, ...args, origin, String(leaseMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    process.stderr.write(chunk);
  });
  // A child that dies or stalls before it is ready fails the test with its own words, not the test's timeout.
  const first = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${fixture} not ${says} within 20 s; stderr:\n${stderr}`)), 20_000);
    child.stdout?.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(chunk.toString());
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${fixture} exited (${code ?? signal}) before it was ${says}; stderr:\n${stderr}`));
    });
  });
  expect(first).toContain(says);
  return child;
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

/** Every webhook-id the receiver saw (all verified), and those it acknowledged with a 2xx. */
function tally(receiver: WebhookReceiver, secret: string) {
  const all = receiver.deliveries();
  for (const delivery of all) {
    // Every delivery, first or repeated, is signed, and its id is the event's.
    const verified = verifyWebhook(delivery.headers, delivery.body, secret);
    expect((verified.payload as { eventId: string }).eventId).toBe(verified.id);
  }
  const ids = all.map((d) => String(d.headers['webhook-id']));
  const acknowledged = new Set(all.filter((d) => d.answer === 200).map((d) => String(d.headers['webhook-id'])));
  return { ids, acknowledged };
}

describe.skipIf(!built)('webhook delivery across processes (real child processes, a real receiver)', () => {
  let receiver: WebhookReceiver;
  let store: TaskStore | undefined;
  beforeEach(async () => {
    receiver = await webhookReceiver();
  });
  afterEach(async () => {
    for (const child of children.splice(0)) await kill9(child);
    await store?.close();
    store = undefined;
    await receiver.close();
  });

  async function subscribed(backend: Backend) {
    const opened = await backend.open();
    store = opened.store;
    await store.init();
    await store.webhooks?.init();
    // The publishing side (a task's process): it writes the outbox and delivers nothing itself.
    const publisher = new OutboxWebhookDeliveries({
      store: store.webhooks!,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
    });
    const secret = generateWebhookSecret();
    await publisher.subscribe({
      owner: 'alice',
      name: TYPE,
      arguments: { taskId: 't-1' },
      url: receiver.url,
      secret,
      cursor: null,
      scope: 't-1',
    });
    return { publisher, secret, args: opened.args };
  }

  for (const backend of backends) {
    it(`${backend.name}: a kill -9 of the delivering process mid-delivery loses no event`, async () => {
      const { publisher, secret, args } = await subscribed(backend);
      const count = 40;
      // The first deliveries never get an answer: the process dies holding them.
      receiver.answers.push('hang', 'hang', 'hang', 'hang', 'hang');
      for (let n = 0; n < count; n++) await publisher.publish(event(n));
      const first = await startDeliverer(args, receiver.origin, 1_500);
      await receiver.waitFor(8);
      await kill9(first);
      const killedAt = receiver.deliveries().length;
      await startDeliverer(args, receiver.origin, 1_500);
      await expect
        .poll(() => tally(receiver, secret).acknowledged.size, { timeout: 30_000, interval: 100 })
        .toBe(count);
      const { ids, acknowledged } = tally(receiver, secret);
      const expected = Array.from({ length: count }, (_, n) => `t-1:${n}`).sort();
      // Lost: none. Duplicates: only repeats of the same webhook-id (the ones in flight when the process died).
      expect([...acknowledged].sort()).toEqual(expected);
      expect([...new Set(ids)].sort()).toEqual(expected);
      expect(ids.length).toBeGreaterThanOrEqual(count + 5);
      expect(killedAt).toBeGreaterThanOrEqual(8);
      await expect.poll(async () => (await publisher.list('alice'))[0]?.queued, { timeout: 10_000 }).toBe(0);
    });

    // spec TS8, TS9: the ending is in the store: a kill -9 of the process that saw the task end, in the middle of
    // delivering, loses none of the deliveries queued before the end, and `terminated` still goes, after them.
    it(`${backend.name}: a kill -9 of the process that ended the subscription drops nothing; terminated comes last`, async () => {
      const { publisher, secret, args } = await subscribed(backend);
      const { id } = (await publisher.list('alice'))[0]!;
      // Its first attempts never get an answer; then the receiver fails once more before it recovers.
      receiver.answers.push('hang', 'hang', 'hang', 503);
      const first = await startDeliverer(args, receiver.origin, 1_500, ender, 'ended');
      await receiver.waitFor(3);
      await kill9(first);
      await startDeliverer(args, receiver.origin, 1_500);
      const terminatedOk = () =>
        receiver.deliveries().filter((d) => d.json['type'] === 'terminated' && d.answer === 200).length;
      await expect.poll(terminatedOk, { timeout: 30_000, interval: 100 }).toBe(1);
      const all = receiver.deliveries();
      const last = all.at(-1)!;
      expect(verifyWebhook(last.headers, last.body, secret).payload).toEqual({
        type: 'terminated',
        error: { code: -32011, message: 'Task ended' },
      });
      const events = all.filter((d) => d.json['type'] === undefined);
      expect([...new Set(events.filter((d) => d.answer === 200).map((d) => d.json['eventId']))].sort()).toEqual([
        't-1:0',
        't-1:1',
        't-1:2',
      ]);
      expect(all.filter((d) => d.json['type'] === 'terminated')).toHaveLength(1);
      expect(await store!.webhooks!.getSubscription(id)).toBeUndefined();
    });

    it(`${backend.name}: three instances deliver each event once`, async () => {
      const { publisher, secret, args } = await subscribed(backend);
      const count = 60;
      await Promise.all([0, 1, 2].map(() => startDeliverer(args, receiver.origin, 30_000)));
      for (let n = 0; n < count; n++) await publisher.publish(event(n));
      await expect
        .poll(() => tally(receiver, secret).acknowledged.size, { timeout: 30_000, interval: 100 })
        .toBe(count);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { ids } = tally(receiver, secret);
      expect(ids.length).toBe(count);
      expect(new Set(ids).size).toBe(count);
    });
  }
});
