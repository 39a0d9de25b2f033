import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { RecordCache } from '../../src/stores/sqlite/RecordCache.js';
import { makeRecord } from '../helpers/records.js';
import { tempDir } from '../helpers/tmp.js';

async function openPair() {
  const path = join(tempDir(), 'tasks.db');
  // No change polling: a read must be fresh on its own, not because a poll cleared something.
  const mine = new SqliteStore({ path, changePollMs: 0 });
  const theirs = new SqliteStore({ path, changePollMs: 0 });
  await mine.init();
  await theirs.init();
  return { mine, theirs, close: () => Promise.all([mine.close(), theirs.close()]) };
}

describe('SqliteStore record cache', () => {
  it('hands out one frozen record for repeated reads of a task', async () => {
    // A store alone: another connection's commit (the pair's second init) makes the next lookup read once more.
    const mine = new SqliteStore({ path: join(tempDir(), 'tasks.db'), changePollMs: 0 });
    await mine.init();
    const close = () => mine.close();
    const record = makeRecord();
    await mine.insert(record);
    const first = await mine.get(record.taskId);
    const second = await mine.get(record.taskId);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.request.params)).toBe(true);
    expect(() => {
      (first as { status: string }).status = 'completed';
    }).toThrow(TypeError);
    await close();
  });

  it('is never staler than the file: writes of this store and of another connection are read at once', async () => {
    const { mine, theirs, close } = await openPair();
    const record = makeRecord({ runner: 'runner-a', leaseUntil: 1000 });
    await mine.insert(record);
    expect((await mine.get(record.taskId))?.version).toBe(1);
    await mine.replace({ ...record, statusMessage: 'mine', version: 2 }, 1);
    expect(await mine.get(record.taskId)).toMatchObject({ version: 2, statusMessage: 'mine' });
    // Another connection (another process sharing the file) changes it: the very next read sees it.
    await theirs.replace({ ...record, statusMessage: 'theirs', version: 3 }, 2);
    expect(await mine.get(record.taskId)).toMatchObject({ version: 3, statusMessage: 'theirs' });
    // A lease renewed in place, by this store and by the other one.
    await mine.renewLeases('runner-a', 5000);
    expect((await mine.get(record.taskId))?.leaseUntil).toBe(5000);
    await theirs.renewLeases('runner-a', 9000);
    expect((await mine.get(record.taskId))?.leaseUntil).toBe(9000);
    await theirs.delete(record.taskId);
    expect(await mine.get(record.taskId)).toBeUndefined();
    await close();
  });

  it('forgets deleted and swept tasks', async () => {
    const { mine, close } = await openPair();
    const deleted = makeRecord();
    const swept = makeRecord({ expiresAt: Date.now() - 1 });
    await mine.insert(deleted);
    await mine.insert(swept);
    await mine.get(deleted.taskId);
    await mine.get(swept.taskId);
    await mine.delete(deleted.taskId);
    expect((await mine.sweepExpired(Date.now(), 10)).map((r) => r.taskId)).toEqual([swept.taskId]);
    expect(await mine.get(deleted.taskId)).toBeUndefined();
    expect(await mine.get(swept.taskId)).toBeUndefined();
    await close();
  });

  it('reads through when turned off', async () => {
    const path = join(tempDir(), 'tasks.db');
    const store = new SqliteStore({ path, recordCacheEntries: 0 });
    await store.init();
    const record = makeRecord();
    await store.insert(record);
    const first = await store.get(record.taskId);
    expect(await store.get(record.taskId)).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(false);
    await store.close();
  });
});

describe('RecordCache bounds', () => {
  const db = () => new Database(':memory:');

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new RecordCache(2, 1 << 20);
    cache.start(db());
    const [a, b, c] = [makeRecord(), makeRecord(), makeRecord()];
    cache.remember(a, 10);
    cache.remember(b, 10);
    expect(cache.get(a.taskId)).toBe(a); // a is now the most recently used
    cache.remember(c, 10);
    expect(cache.size).toBe(2);
    expect(cache.get(b.taskId)).toBeUndefined();
    expect(cache.get(a.taskId)).toBe(a);
    expect(cache.get(c.taskId)).toBe(c);
  });

  it("checks the file's version only for a task it holds, and empties itself at the first lookup after a commit elsewhere", () => {
    const path = join(tempDir(), 'version.db');
    const mine = new Database(path);
    mine.pragma('journal_mode = WAL');
    mine.exec('CREATE TABLE t (v INTEGER)');
    const theirs = new Database(path);
    const cache = new RecordCache(10, 1 << 20);
    cache.start(mine);
    const [held, other] = [makeRecord(), makeRecord()];
    cache.remember(held, 10);
    theirs.prepare('INSERT INTO t VALUES (1)').run();
    // A task it does not hold: read from the file by the caller, whatever the version; what it holds stays.
    expect(cache.get(other.taskId)).toBeUndefined();
    expect(cache.size).toBe(1);
    cache.remember(other, 10);
    // The first lookup of a held task sees the other connection's commit: nothing cached before it is handed out.
    expect(cache.get(held.taskId)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.remember(held, 10);
    expect(cache.get(held.taskId)).toBe(held);
    mine.close();
    theirs.close();
  });

  it('keeps at most maxBytes of stored JSON, and never a record larger than that alone', () => {
    const cache = new RecordCache(100, 1000);
    cache.start(db());
    const records = Array.from({ length: 5 }, () => makeRecord());
    for (const record of records) cache.remember(record, 300);
    expect(cache.size).toBe(3);
    expect(cache.get(records[0]!.taskId)).toBeUndefined();
    const huge = makeRecord();
    cache.remember(huge, 1001);
    expect(cache.get(huge.taskId)).toBeUndefined();
    expect(cache.size).toBe(3);
  });
});
