import { describe, expect, it } from 'vitest';

import type {
  OutboxEntry,
  TaskStore,
  WebhookOutboxStore,
  WebhookSubscriptionRecord,
  WebhookSubscriptionStatus,
} from '../../src/engine/index.js';
import { storePerTest, type EachStoreHarness } from './eachStore.js';

export const outboxOf = (store: TaskStore): WebhookOutboxStore => {
  if (!store.webhooks) throw new Error(`${store.kind} has no webhook outbox`);
  return store.webhooks;
};

const record = (
  id: string,
  owner = 'alice',
  extra: Partial<WebhookSubscriptionRecord> = {},
): WebhookSubscriptionRecord => ({
  id,
  owner,
  name: 'io.github.mcp-tasks.task-status',
  url: 'https://hooks.example.com/in',
  arguments: '{"taskId":"t-1"}',
  scope: 't-1',
  secrets: [{ secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
  expiresAt: 10_000,
  createdAt: 1_000,
  verified: true,
  ...extra,
});

const status = (extra: Partial<WebhookSubscriptionStatus> = {}): WebhookSubscriptionStatus => ({
  active: true,
  lastDeliveryAt: null,
  lastError: null,
  failedSince: null,
  windowStart: 1_000,
  windowAttempts: 0,
  windowFailures: 0,
  ...extra,
});

const entry = (subscriptionId: string, n: number, extra: Partial<OutboxEntry> = {}): OutboxEntry => ({
  subscriptionId,
  webhookId: `t-1:${n}`,
  kind: 'event',
  body: JSON.stringify({ eventId: `t-1:${n}`, name: 'x', timestamp: 'T', data: { n, note: 'ünï ✓' } }),
  cursor: `c${n + 1}`,
  dueAt: 100 + n,
  ...extra,
});

/** The webhook outbox contract every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function webhookOutboxContract(name: string, harness: EachStoreHarness): void {
  describe(`webhook outbox contract: ${name}`, () => {
    let store: TaskStore;
    const opened = storePerTest(harness, (fresh) => (store = fresh));

    it('saves, reads, lists and replaces subscriptions, keeping status and watermark on a replace', async () => {
      const outbox = outboxOf(store);
      expect(await outbox.saveSubscription(record('sub_a'), undefined, 10)).toBe('created');
      expect(await outbox.saveSubscription(record('sub_b', 'bob'), status({ active: false }), 10)).toBe('created');
      const a = await outbox.getSubscription('sub_a');
      expect(a?.record).toEqual(record('sub_a'));
      expect(a?.status.active).toBe(true);
      expect(a?.watermark).toBeNull();
      expect((await outbox.getSubscription('sub_b'))?.status).toEqual(status({ active: false }));
      expect(await outbox.getSubscription('sub_missing')).toBeUndefined();

      await outbox.setStatus('sub_a', status({ lastError: 'timeout', failedSince: 5 }));
      await outbox.advanceWatermark('sub_a', 7, 'c8');
      const rotated = record('sub_a', 'alice', {
        secrets: [{ secret: 'whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }, { secret: 'whsec_old', until: 99 }],
        expiresAt: null,
      });
      expect(await outbox.saveSubscription(rotated, undefined, 1)).toBe('updated');
      const after = await outbox.getSubscription('sub_a');
      expect(after?.record).toEqual(rotated);
      expect(after?.status).toEqual(status({ lastError: 'timeout', failedSince: 5 }));
      expect(after?.watermark).toEqual({ seq: 7, cursor: 'c8' });
      // A replace with a status sets it.
      await outbox.saveSubscription(rotated, status(), 1);
      expect((await outbox.getSubscription('sub_a'))?.status).toEqual(status());

      expect((await outbox.subscriptionsOf('alice')).map((s) => s.record.id)).toEqual(['sub_a']);
      expect((await outbox.subscriptionsOf('carol')).map((s) => s.record.id)).toEqual([]);
      const named = await outbox.subscriptionsNamed('io.github.mcp-tasks.task-status');
      expect(named.map((s) => s.record.id).sort()).toEqual(['sub_a', 'sub_b']);
      expect(await outbox.subscriptionsNamed('other')).toEqual([]);
      // By scope: those of that scope and those without one.
      await outbox.saveSubscription(record('sub_c', 'carol', { scope: null }), undefined, 10);
      await outbox.saveSubscription(record('sub_d', 'carol', { scope: 't-2' }), undefined, 10);
      const ids = async (scope?: string) =>
        (await outbox.subscriptionsNamed('io.github.mcp-tasks.task-status', scope)).map((s) => s.record.id).sort();
      expect(await ids('t-1')).toEqual(['sub_a', 'sub_b', 'sub_c']);
      expect(await ids('t-2')).toEqual(['sub_c', 'sub_d']);
      expect(await ids('t-3')).toEqual(['sub_c']);
      // A replace that changes the scope moves it; a deleted one is gone from every index.
      await outbox.saveSubscription(record('sub_d', 'carol', { scope: 't-3' }), undefined, 10);
      expect(await ids('t-2')).toEqual(['sub_c']);
      expect(await ids('t-3')).toEqual(['sub_c', 'sub_d']);
      await outbox.deleteSubscription('sub_c');
      expect(await ids('t-3')).toEqual(['sub_d']);
      expect(await ids()).toEqual(['sub_a', 'sub_b', 'sub_d']);
    });

    it('bounds the subscriptions per owner; a replace is never refused', async () => {
      const outbox = outboxOf(store);
      expect(await outbox.saveSubscription(record('sub_1'), undefined, 2)).toBe('created');
      expect(await outbox.saveSubscription(record('sub_2'), undefined, 2)).toBe('created');
      expect(await outbox.saveSubscription(record('sub_3'), undefined, 2)).toBe('limit');
      expect(await outbox.getSubscription('sub_3')).toBeUndefined();
      expect(await outbox.saveSubscription(record('sub_2'), undefined, 2)).toBe('updated');
      // Another owner has its own bound.
      expect(await outbox.saveSubscription(record('sub_4', 'bob'), undefined, 2)).toBe('created');
      expect(await outbox.deleteSubscription('sub_1')).toBe(true);
      expect(await outbox.saveSubscription(record('sub_3'), undefined, 2)).toBe('created');
    });

    it('moves the watermark only forward', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      await outbox.advanceWatermark('sub_a', 5, 'c6');
      await outbox.advanceWatermark('sub_a', 3, 'c4');
      await outbox.advanceWatermark('sub_a', 5, 'other');
      expect((await outbox.getSubscription('sub_a'))?.watermark).toEqual({ seq: 5, cursor: 'c6' });
      await outbox.advanceWatermark('sub_a', 9, null);
      expect((await outbox.getSubscription('sub_a'))?.watermark).toEqual({ seq: 9, cursor: null });
    });

    it('enqueues rows in order, bounded per subscription (done rows do not count)', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      await outbox.saveSubscription(record('sub_b'), undefined, 10);
      const s0 = await outbox.enqueue(entry('sub_a', 0), 2);
      const s1 = await outbox.enqueue(entry('sub_a', 1), 2);
      expect(s0).toBeTypeOf('number');
      expect(s1).toBeGreaterThan(s0 as number);
      expect(await outbox.enqueue(entry('sub_a', 2), 2)).toBeUndefined();
      // The bound is per subscription.
      expect(await outbox.enqueue(entry('sub_b', 0), 2)).toBeTypeOf('number');

      const rows = await outbox.rowsOf('sub_a');
      expect(rows).toEqual([
        { ...entry('sub_a', 0), seq: s0, attempts: 0, lastStatus: null, token: null, done: false },
        { ...entry('sub_a', 1), seq: s1, attempts: 0, lastStatus: null, token: null, done: false },
      ]);
      const [claimed] = await outbox.claim('w1', 1_000, 30_000, 1);
      expect(claimed?.seq).toBe(s0);
      expect(await outbox.settle(s0 as number, 'w1', { done: true, lastStatus: '200' })).toBe(true);
      expect(await outbox.enqueue(entry('sub_a', 2), 2)).toBeTypeOf('number');
      expect(await outbox.enqueue(entry('sub_a', 3), 2)).toBeUndefined();
    });

    it('keeps one waiting gap per subscription (its cursor replaced), beyond the bound, and terminated rows too', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      await outbox.enqueue(entry('sub_a', 0), 1);
      const gap = { subscriptionId: 'sub_a', webhookId: 'msg_gap_1', kind: 'gap' as const, body: '{"type":"gap"}' };
      const g1 = await outbox.enqueue({ ...gap, cursor: 'g1', dueAt: 200 }, 1);
      const g2 = await outbox.enqueue({ ...gap, webhookId: 'msg_gap_2', cursor: 'g2', dueAt: 300 }, 1);
      expect(g1).toBeTypeOf('number');
      expect(g2).toBe(g1);
      const gaps = (await outbox.rowsOf('sub_a')).filter((r) => r.kind === 'gap');
      expect(gaps).toHaveLength(1);
      expect(gaps[0]?.cursor).toBe('g2');
      // A claimed gap is not replaced: a new one waits behind it.
      await outbox.claim('w1', 1_000, 30_000, 10);
      const g3 = await outbox.enqueue({ ...gap, webhookId: 'msg_gap_3', cursor: 'g3', dueAt: 300 }, 1);
      expect(g3).not.toBe(g1);
      const term = await outbox.enqueue(
        {
          subscriptionId: 'sub_a',
          webhookId: 'msg_terminated_1',
          kind: 'terminated',
          body: '{"type":"terminated"}',
          cursor: null,
          dueAt: 400,
          target: { url: 'https://hooks.example.com/in', secrets: ['whsec_x'] },
        },
        1,
      );
      expect(term).toBeTypeOf('number');
      expect((await outbox.rowsOf('sub_a')).find((r) => r.seq === term)?.target).toEqual({
        url: 'https://hooks.example.com/in',
        secrets: ['whsec_x'],
      });
    });

    it('claims due rows under a lease; only the holder settles; a lapsed lease is claimed again', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      const s0 = (await outbox.enqueue(entry('sub_a', 0), 10)) as number;
      const s1 = (await outbox.enqueue(entry('sub_a', 1, { dueAt: 5_000 }), 10)) as number;

      expect(await outbox.claim('w1', 50, 1_000, 10)).toEqual([]); // nothing due yet
      const first = await outbox.claim('w1', 1_000, 1_000, 10);
      expect(first.map((r) => r.seq)).toEqual([s0]);
      expect(first[0]).toMatchObject({ token: 'w1', attempts: 1, webhookId: 't-1:0', dueAt: 2_000 });
      // Held: another claimer gets nothing until the lease ends.
      expect(await outbox.claim('w2', 1_500, 1_000, 10)).toEqual([]);
      const again = await outbox.claim('w2', 2_001, 1_000, 10);
      expect(again.map((r) => r.seq)).toEqual([s0]);
      expect(again[0]).toMatchObject({ token: 'w2', attempts: 2, webhookId: 't-1:0' });
      // The first holder lost it: its settlement writes nothing.
      expect(await outbox.settle(s0, 'w1', { done: true, lastStatus: '200' })).toBe(false);
      expect((await outbox.rowsOf('sub_a'))[0]).toMatchObject({ done: false, token: 'w2' });
      expect(await outbox.settle(s0, 'w2', { done: false, dueAt: 4_000, lastStatus: 'http_5xx' })).toBe(true);
      expect((await outbox.rowsOf('sub_a'))[0]).toMatchObject({
        done: false,
        token: null,
        dueAt: 4_000,
        lastStatus: 'http_5xx',
        attempts: 2,
      });
      // Settled once: a second settlement by the same token is refused.
      expect(await outbox.settle(s0, 'w2', { done: true, lastStatus: '200' })).toBe(false);

      const later = await outbox.claim('w3', 5_000, 1_000, 10);
      expect(later.map((r) => r.seq)).toEqual([s0, s1]);
      expect(await outbox.settle(s0, 'w3', { done: true, lastStatus: '200' })).toBe(true);
      expect(await outbox.claim('w4', 100_000, 1_000, 10)).toMatchObject([{ seq: s1 }]); // done rows are never claimed
      expect((await outbox.rowsOf('sub_a')).find((r) => r.seq === s0)).toMatchObject({ done: true, lastStatus: '200' });
    });

    it('hands each due row to one claimer when many claim at once', async () => {
      const outbox = outboxOf(store);
      const other = harness.sibling ? outboxOf(await harness.sibling(store).then((s) => (opened.push(s), s))) : outbox;
      await outbox.saveSubscription(record('sub_a'), undefined, 100);
      for (let i = 0; i < 40; i++) await outbox.enqueue(entry('sub_a', i), 100);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? other : outbox).claim(`w${i}`, 1_000, 60_000, 7)),
      );
      const seqs = claims.flat().map((r) => r.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs.length).toBe(40);
    });

    it('limits a claim to `limit` rows, earliest first', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 100);
      const seqs: number[] = [];
      for (let i = 0; i < 5; i++) seqs.push((await outbox.enqueue(entry('sub_a', i), 100)) as number);
      expect((await outbox.claim('w1', 1_000, 60_000, 2)).map((r) => r.seq)).toEqual(seqs.slice(0, 2));
      expect((await outbox.claim('w1', 1_000, 60_000, 0)).length).toBe(0);
    });

    it('deletes a subscription with its rows but its terminated envelope; deletes rows by seq', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      await outbox.saveSubscription(record('sub_b'), undefined, 10);
      await outbox.enqueue(entry('sub_a', 0), 10);
      const kept = (await outbox.enqueue(entry('sub_b', 0), 10)) as number;
      const term = await outbox.enqueue(
        { ...entry('sub_a', 1), kind: 'terminated', webhookId: 'msg_terminated_x', target: { url: 'u', secrets: [] } },
        10,
      );
      expect(await outbox.deleteSubscription('sub_a')).toBe(true);
      expect(await outbox.deleteSubscription('sub_a')).toBe(false);
      expect(await outbox.getSubscription('sub_a')).toBeUndefined();
      expect(await outbox.subscriptionsOf('alice')).toHaveLength(1);
      expect((await outbox.rowsOf('sub_a')).map((r) => r.seq)).toEqual([term]);
      // The terminated row is still delivered.
      expect((await outbox.claim('w1', 1_000, 1_000, 10)).map((r) => r.seq).sort()).toEqual([kept, term].sort());
      await outbox.deleteRows([term as number]);
      expect(await outbox.rowsOf('sub_a')).toEqual([]);
      expect((await outbox.rowsOf('sub_b')).map((r) => r.seq)).toEqual([kept]);
      await outbox.deleteRows([]);
    });

    const terminated = (subscriptionId: string, dueAt = 0): OutboxEntry => ({
      subscriptionId,
      webhookId: `msg_terminated_${subscriptionId}`,
      kind: 'terminated',
      body: '{"type":"terminated","error":{"code":-32011,"message":"Task ended"}}',
      cursor: null,
      dueAt,
      target: { url: 'https://hooks.example.com/in', secrets: ['whsec_x'] },
    });

    // spec TS8, TS9: a subscription ended with 3 rows queued and a failing receiver: the rows are retried, then the
    // terminated envelope goes after them and the subscription is gone. Nothing queued is dropped.
    it('ends a subscription after its queued rows: terminated only once every row before it is done', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      await outbox.saveSubscription(record('sub_b'), undefined, 10);
      const [s0, s1, s2] = [
        (await outbox.enqueue(entry('sub_a', 0), 10)) as number,
        (await outbox.enqueue(entry('sub_a', 1), 10)) as number,
        (await outbox.enqueue(entry('sub_a', 2), 10)) as number,
      ];
      const end = await outbox.endSubscription(terminated('sub_a', 100));
      expect(end).toBeGreaterThan(s2);
      expect((await outbox.getSubscription('sub_a'))?.ending).toBe(end);
      expect((await outbox.getSubscription('sub_b'))?.ending).toBeNull();
      // Ending twice keeps the first; a missing subscription cannot end.
      expect(await outbox.endSubscription(terminated('sub_a', 100))).toBe(end);
      expect(await outbox.endSubscription(terminated('sub_missing', 100))).toBeUndefined();
      // An ending subscription takes nothing new; the other one does.
      expect(await outbox.enqueue(entry('sub_a', 3), 10)).toBeUndefined();
      expect(await outbox.enqueue({ ...entry('sub_a', 3), kind: 'gap', webhookId: 'msg_gap_a' }, 10)).toBeUndefined();
      const other = (await outbox.enqueue(entry('sub_b', 0, { dueAt: 100 }), 10)) as number;

      // The rows go; terminated waits. The other subscription's row is not held back by it.
      const first = await outbox.claim('w1', 1_000, 1_000, 10);
      expect(first.map((r) => r.seq).sort((a, b) => a - b)).toEqual([s0, s1, s2, other].sort((a, b) => a - b));
      // The receiver fails row 1: retried later; rows 0 and 2 are delivered.
      await outbox.settle(s0, 'w1', { done: true, lastStatus: '200' });
      await outbox.settle(s1, 'w1', { done: false, dueAt: 5_000, lastStatus: 'http_5xx' });
      await outbox.settle(s2, 'w1', { done: true, lastStatus: '200' });
      await outbox.settle(other, 'w1', { done: true, lastStatus: '200' });
      expect(await outbox.claim('w2', 4_000, 1_000, 10)).toEqual([]);
      expect((await outbox.getSubscription('sub_a'))?.ending).toBe(end);
      // The retry fails again, then is given up (done): that counts as settled.
      expect((await outbox.claim('w2', 5_000, 1_000, 10)).map((r) => r.seq)).toEqual([s1]);
      await outbox.settle(s1, 'w2', { done: false, dueAt: 8_000, lastStatus: 'http_5xx' });
      expect(await outbox.claim('w3', 7_000, 1_000, 10)).toEqual([]);
      expect((await outbox.claim('w3', 8_000, 1_000, 10)).map((r) => r.seq)).toEqual([s1]);
      expect(await outbox.getSubscription('sub_a')).toBeDefined();
      await outbox.settle(s1, 'w3', { done: false, dueAt: 9_000, lastStatus: 'http_5xx' });
      expect((await outbox.claim('w3', 9_000, 1_000, 10)).map((r) => r.seq)).toEqual([s1]);
      await outbox.settle(s1, 'w3', { done: true, lastStatus: 'http_5xx' });

      // Now terminated is due, and claiming it removes the subscription with its settled rows.
      const last = await outbox.claim('w4', 9_500, 1_000, 10);
      expect(last.map((r) => [r.seq, r.kind, r.webhookId])).toEqual([[end, 'terminated', 'msg_terminated_sub_a']]);
      expect(last[0]?.target).toEqual({ url: 'https://hooks.example.com/in', secrets: ['whsec_x'] });
      expect(await outbox.getSubscription('sub_a')).toBeUndefined();
      expect(await outbox.subscriptionsNamed('io.github.mcp-tasks.task-status', 't-1')).toHaveLength(1);
      expect((await outbox.rowsOf('sub_a')).map((r) => r.seq)).toEqual([end]);
      // Its holder died: another claims it after the lease, with the same webhook-id.
      const again = await outbox.claim('w5', 10_600, 1_000, 10);
      expect(again.map((r) => [r.seq, r.webhookId, r.attempts])).toEqual([[end, 'msg_terminated_sub_a', 2]]);
      expect(await outbox.settle(end as number, 'w5', { done: true, lastStatus: '200' })).toBe(true);
      // The same key subscribed again is a new subscription, not ending.
      expect(await outbox.saveSubscription(record('sub_a'), undefined, 10)).toBe('created');
      expect((await outbox.getSubscription('sub_a'))?.ending).toBeNull();
    });

    it('ends a subscription with nothing queued at once; one removed while ending leaves terminated due', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      const end = await outbox.endSubscription(terminated('sub_a', 100));
      expect((await outbox.claim('w1', 1_000, 1_000, 10)).map((r) => r.seq)).toEqual([end]);
      expect(await outbox.getSubscription('sub_a')).toBeUndefined();
      await outbox.settle(end as number, 'w1', { done: true, lastStatus: '200' });

      // Ending behind a row whose retry is far off, then unsubscribed (or expired): its rows go, terminated is due.
      await outbox.saveSubscription(record('sub_b'), undefined, 10);
      const held = (await outbox.enqueue(entry('sub_b', 0, { dueAt: 100 }), 10)) as number;
      expect((await outbox.claim('w1', 1_000, 1_000, 10)).map((r) => r.seq)).toEqual([held]);
      await outbox.settle(held, 'w1', { done: false, dueAt: 600_000, lastStatus: 'timeout' });
      const endB = (await outbox.endSubscription(terminated('sub_b', 2_000))) as number;
      expect(await outbox.claim('w2', 3_000, 1_000, 10)).toEqual([]);
      expect(await outbox.deleteSubscription('sub_b')).toBe(true);
      expect((await outbox.rowsOf('sub_b')).map((r) => r.seq)).toEqual([endB]);
      expect((await outbox.claim('w2', 3_000, 1_000, 10)).map((r) => r.seq)).toEqual([endB]);
    });

    // spec TS8 across processes: the ending is in the store, so it outlives the process that saw the task end.
    it('keeps a subscription ending across a restart of the store (file and server stores)', async () => {
      if (!harness.sibling) return;
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a'), undefined, 10);
      const s0 = (await outbox.enqueue(entry('sub_a', 0), 10)) as number;
      const end = (await outbox.endSubscription(terminated('sub_a', 100))) as number;
      await store.close();
      opened.splice(opened.indexOf(store), 1);
      const reopened = await harness.sibling(store);
      opened.push(reopened);
      const after = outboxOf(reopened);
      expect((await after.getSubscription('sub_a'))?.ending).toBe(end);
      expect(await after.enqueue(entry('sub_a', 1), 10)).toBeUndefined();
      expect((await after.claim('w1', 1_000, 1_000, 10)).map((r) => r.seq)).toEqual([s0]);
      await after.settle(s0, 'w1', { done: true, lastStatus: '200' });
      expect((await after.claim('w1', 1_000, 1_000, 10)).map((r) => r.seq)).toEqual([end]);
      expect(await after.getSubscription('sub_a')).toBeUndefined();
    });

    it('lists subscriptions whose grant ended', async () => {
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a', 'alice', { expiresAt: 500 }), undefined, 10);
      await outbox.saveSubscription(record('sub_b', 'alice', { expiresAt: 1_500 }), undefined, 10);
      await outbox.saveSubscription(record('sub_c', 'alice', { expiresAt: null }), undefined, 10);
      expect(await outbox.expired(400, 10)).toEqual([]);
      expect(await outbox.expired(1_000, 10)).toEqual(['sub_a']);
      expect((await outbox.expired(2_000, 10)).sort()).toEqual(['sub_a', 'sub_b']);
      expect(await outbox.expired(2_000, 1)).toHaveLength(1);
      // A refresh moves it out.
      await outbox.saveSubscription(record('sub_a', 'alice', { expiresAt: 9_000 }), undefined, 10);
      expect(await outbox.expired(2_000, 10)).toEqual(['sub_b']);
    });

    // spec V79, V80, V117: subscriptions, their verification and their queued deliveries survive a restart.
    it('survives a restart of the store (file and server stores)', async () => {
      if (!harness.sibling) return;
      const outbox = outboxOf(store);
      await outbox.saveSubscription(record('sub_a', 'alice', { expiresAt: null }), undefined, 10);
      const s0 = (await outbox.enqueue(entry('sub_a', 0), 10)) as number;
      await outbox.claim('dead-process', 1_000, 1_000, 10);
      await store.close();
      opened.splice(opened.indexOf(store), 1);
      const reopened = await harness.sibling(store);
      opened.push(reopened);
      const after = outboxOf(reopened);
      expect((await after.getSubscription('sub_a'))?.record).toEqual(record('sub_a', 'alice', { expiresAt: null }));
      // The claim of the process that died lapses, and the row is delivered by another.
      const claimed = await after.claim('w2', 2_500, 1_000, 10);
      expect(claimed.map((r) => [r.seq, r.webhookId, r.attempts])).toEqual([[s0, 't-1:0', 2]]);
    });
  });
}
