import { mkdirSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { StoreUnavailableError } from '../../src/engine/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { GroupCommit } from '../../src/stores/sqlite/GroupCommit.js';
import { WalSync } from '../../src/stores/sqlite/WalSync.js';
import { makeRecord } from '../helpers/records.js';
import { tempDir } from '../helpers/tmp.js';

/** Calls afterCommit and resolves with what it was settled with. */
const flushed = (sync: WalSync) => new Promise<Error | undefined>((resolve) => sync.afterCommit(resolve));

describe('WalSync: commits flushed to disk off the event loop', () => {
  it('settles a commit only after a flush that started after it: a commit starts its own while fewer than two are under way, later ones share the next', async () => {
    const path = join(tempDir(), 'tasks.db-wal');
    writeFileSync(path, 'frames');
    const sync = new WalSync(path);
    const order: number[] = [];
    const commit = (i: number) =>
      flushed(sync).then((error) => {
        order.push(i);
        return error;
      });
    const first = commit(0);
    // Never settled in the call itself: fdatasync runs on the thread pool.
    expect(order).toEqual([]);
    // The second starts a flush of its own at once, beside the first.
    const second = commit(1);
    expect(sync.flushes).toBe(2);
    // Eight more while both are under way: none may ride on them, all of them share the third.
    const during = Array.from({ length: 8 }, (_, i) => commit(i + 2));
    expect(sync.flushes).toBe(2);
    expect(await Promise.all([first, second, ...during])).toEqual(Array(10).fill(undefined));
    expect(sync.flushes).toBe(3);
    // Settled in the order the commits were made, whichever flush's call returned first.
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await sync.settled();
    sync.close();
  });

  it('fails the flush under way beside a failed one, and flushes again afterwards', async () => {
    const path = join(tempDir(), 'tasks.db-wal');
    // The first flush cannot open its file (a directory there: EISDIR)...
    mkdirSync(path);
    const sync = new WalSync(path);
    const failed = flushed(sync);
    // ...while the second, started beside it, flushes a real file: its call may well return success, but a write-back
    // error is reported to one call only, so it is not trusted.
    rmSync(path, { recursive: true });
    writeFileSync(path, 'frames');
    const beside = flushed(sync);
    expect(sync.flushes).toBe(1);
    const errors = await Promise.all([failed, beside]);
    expect(errors.map((error) => (error as NodeJS.ErrnoException | undefined)?.code)).toEqual(['EISDIR', 'EISDIR']);
    expect(await flushed(sync)).toBeUndefined();
    expect(sync.flushes).toBe(2);
    await sync.settled();
    sync.close();
  });

  it('follows a WAL file replaced under its path, and settles at once when there is none (checkpointed away)', async () => {
    const dir = tempDir();
    const path = join(dir, 'tasks.db-wal');
    writeFileSync(path, 'old');
    const sync = new WalSync(path);
    expect(await flushed(sync)).toBeUndefined();
    rmSync(path);
    expect(await flushed(sync)).toBeUndefined();
    expect(sync.flushes).toBe(1);
    writeFileSync(path, 'new');
    expect(await flushed(sync)).toBeUndefined();
    expect(sync.flushes).toBe(2);
    sync.close();
  });

  it('keeps the old file open until the flush under way on it has finished, then closes it', async () => {
    const dir = tempDir();
    const path = join(dir, 'tasks.db-wal');
    const openOnDir = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
        } catch {
          return false; // the descriptor readdir itself used
        }
      }).length;
    writeFileSync(path, 'old');
    const sync = new WalSync(path);
    const onOld = flushed(sync);
    // Replaced while the first flush runs: the second flushes the new file, the old descriptor stays open meanwhile.
    rmSync(path);
    writeFileSync(path, 'new');
    const onNew = flushed(sync);
    expect(sync.flushes).toBe(2);
    expect(openOnDir()).toBe(2);
    expect(await Promise.all([onOld, onNew])).toEqual([undefined, undefined]);
    await sync.settled();
    expect(openOnDir()).toBe(1);
    sync.close();
    expect(openOnDir()).toBe(0);
  });

  it('hands a flush failure to every commit waiting for it', async () => {
    const path = join(tempDir(), 'tasks.db-wal');
    mkdirSync(path);
    const sync = new WalSync(path);
    const errors = await Promise.all([flushed(sync), flushed(sync)]);
    expect(errors.map((error) => (error as NodeJS.ErrnoException | undefined)?.code)).toEqual(['EISDIR', 'EISDIR']);
    await sync.settled();
  });
});

describe('GroupCommit with a WAL flush', () => {
  it('fails a durable write whose flush failed with store_unavailable, while a history write settles once committed', async () => {
    const dir = tempDir();
    const db = new Database(join(dir, 'x.db'));
    db.exec('CREATE TABLE t (v TEXT)');
    const walPath = join(dir, 'broken-wal');
    mkdirSync(walPath);
    const commits = new GroupCommit(() => db, new WalSync(walPath));
    const durable = commits
      .run(() => db.prepare('INSERT INTO t VALUES (?)').run('durable'))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const history = commits.run(() => db.prepare('INSERT INTO t VALUES (?)').run('history'), { durable: false });
    await expect(history).resolves.toMatchObject({ changes: 1 });
    const failure = await durable;
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).toMatch(/could not flush the SQLite WAL to disk: EISDIR/);
    // Committed all the same: reported as not known to be on disk, never as absent.
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual(['durable', 'history']);
    db.close();
  });

  it('flushes once for the writes of one round of the event loop', async () => {
    const dir = tempDir();
    const path = join(dir, 'x.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER)');
    const sync = new WalSync(`${path}-wal`);
    const commits = new GroupCommit(() => db, sync);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    await Promise.all(Array.from({ length: 50 }, (_, i) => commits.run(() => insert.run(i))));
    // The first write commits at once (its flush starts), the other 49 share one transaction and the next flush.
    expect(sync.flushes).toBe(2);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(50);
    await commits.drain();
    sync.close();
    db.close();
  });
});

describe('SqliteStore durability', () => {
  it('keeps every acknowledged write across a close and reopen, timeline entries included', async () => {
    const path = join(tempDir(), 'tasks.db');
    const store = new SqliteStore({ path });
    await store.init();
    await store.timeline?.init();
    const records = Array.from({ length: 20 }, () => makeRecord());
    await Promise.all(records.map((record) => store.insert(record)));
    await Promise.all(
      records.map((record) => store.replace({ ...record, status: 'completed', version: 2 }, record.version)),
    );
    await store.timeline?.append(records[0]!.taskId, [{ at: 1, kind: 'created', status: 'completed' }], 10);
    await store.close();
    const again = new SqliteStore({ path });
    await again.init();
    await again.timeline?.init();
    for (const record of records) expect((await again.get(record.taskId))?.status).toBe('completed');
    expect(await again.timeline?.read(records[0]!.taskId)).toHaveLength(1);
    await again.close();
  });
});
