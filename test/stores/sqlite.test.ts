import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import type { TaskRecord } from '../../src/engine/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { SQLITE_MIGRATIONS } from '../../src/stores/sqlite/migrations.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRecord } from '../helpers/records.js';
import { storeContract, waitUntil } from './storeContract.js';

const paths = new WeakMap<object, string>();

storeContract('sqlite', {
  async create() {
    const path = join(tempDir(), 'tasks.db');
    const store = new SqliteStore({ path });
    await store.init();
    paths.set(store, path);
    return store;
  },
  async sibling(store) {
    const sibling = new SqliteStore({ path: paths.get(store) as string });
    await sibling.init();
    return sibling;
  },
});

/** Back to the schema before the browse columns (migration 3). */
const UNDO_BROWSE_COLUMNS = `
  DROP INDEX mcp_tasks_tool_created; DROP INDEX mcp_tasks_dialect_created;
  ALTER TABLE mcp_tasks DROP COLUMN tool; ALTER TABLE mcp_tasks DROP COLUMN dialect;
`;
/** Undoes the fifth step (the fetch mark and the byte counters), back to the triggers of the second. */
const UNDO_FETCHED = `
  DROP TRIGGER mcp_tasks_count_update; DROP TRIGGER mcp_tasks_count_insert; DROP TRIGGER mcp_tasks_count_delete;
  DROP TABLE mcp_tasks_totals; DROP INDEX mcp_tasks_owner_fetched; DROP INDEX mcp_tasks_fetched;
  ALTER TABLE mcp_tasks DROP COLUMN fetched_at; ALTER TABLE mcp_tasks_owners DROP COLUMN bytes;
  CREATE TRIGGER mcp_tasks_count_insert AFTER INSERT ON mcp_tasks BEGIN
    INSERT INTO mcp_tasks_owners (owner, stored) VALUES (NEW.owner, 1)
      ON CONFLICT (owner) DO UPDATE SET stored = stored + 1;
  END;
  CREATE TRIGGER mcp_tasks_count_delete AFTER DELETE ON mcp_tasks BEGIN
    UPDATE mcp_tasks_owners SET stored = stored - 1 WHERE owner = OLD.owner;
  END;
`;

describe('SqliteStore change signal between connections', () => {
  it('wakes a waiter when another connection to the file changes or deletes its task, and only that waiter', async () => {
    const path = join(tempDir(), 'tasks.db');
    const mine = new SqliteStore({ path, changePollMs: 10 });
    const theirs = new SqliteStore({ path, changePollMs: 10 });
    await mine.init();
    await theirs.init();
    try {
      const watched = makeRecord();
      const other = makeRecord();
      await mine.insert(watched);
      await mine.insert(other);
      const woken: string[] = [];
      const off = mine.events.subscribe(watched.taskId, () => woken.push('watched'));
      mine.events.subscribe(other.taskId, () => woken.push('other'));
      await theirs.replace({ ...watched, statusMessage: 'half way', version: 2 }, 1);
      await waitUntil(() => woken.includes('watched'), 2000);
      // A lease renewal is not a task change.
      await theirs.renewLeases('nobody', Date.now() + 1000);
      await theirs.delete(watched.taskId);
      await waitUntil(() => woken.filter((w) => w === 'watched').length === 2, 2000);
      off();
      await theirs.replace({ ...other, status: 'completed', version: 2 }, 1);
      await waitUntil(() => woken.includes('other'), 2000);
      expect(woken).toEqual(['watched', 'watched', 'other']);
    } finally {
      await mine.close();
      await theirs.close();
    }
  });
});

describe('SqliteStore per-owner counter', () => {
  it('fills the browse columns of the tasks stored before they existed', async () => {
    const path = join(tempDir(), 'tasks.db');
    const before = new SqliteStore({ path });
    await before.init();
    const old = makeRecord({ dialect: 'sep-1686' });
    await before.insert(old);
    await before.close();
    const db = new Database(path);
    db.exec(UNDO_FETCHED);
    db.exec(UNDO_BROWSE_COLUMNS);
    db.pragma('user_version = 2');
    db.close();
    const after = new SqliteStore({ path });
    await after.init();
    try {
      await after.browse?.init();
      const fresh = makeRecord({ createdAt: old.createdAt - 1, dialect: 'sep-1686' });
      await after.insert(fresh);
      const found = await after.browse?.page({ tool: 'echo', dialect: 'sep-1686' }, { limit: 10, now: Date.now() });
      expect(found?.map((record) => record.taskId)).toEqual([old.taskId, fresh.taskId]);
    } finally {
      await after.close();
    }
  });

  it('counts the tasks already stored when the counter is added to an existing file', async () => {
    const path = join(tempDir(), 'tasks.db');
    const before = new SqliteStore({ path });
    await before.init();
    const stored = [
      ...Array.from({ length: 3 }, () => makeRecord({ status: 'completed' })),
      makeRecord({ owner: 'owner-b' }),
    ];
    for (const record of stored) await before.insert(record);
    await before.close();
    // Back to the first schema version, as a file written before the counter existed.
    const db = new Database(path);
    db.exec(UNDO_FETCHED);
    db.exec(UNDO_BROWSE_COLUMNS);
    db.exec('DROP TRIGGER mcp_tasks_count_insert; DROP TRIGGER mcp_tasks_count_delete; DROP TABLE mcp_tasks_owners');
    db.pragma('user_version = 1');
    db.close();
    const after = new SqliteStore({ path });
    await after.init();
    try {
      expect(await after.insert(makeRecord(), { maxStored: 3 })).toEqual({
        inserted: false,
        reason: 'limit',
        limit: 'stored',
      });
      expect(await after.insert(makeRecord({ owner: 'owner-b' }), { maxStored: 3 })).toEqual({ inserted: true });
      // The byte counters start from the records already stored too.
      const bytes = (record: TaskRecord) => Buffer.byteLength(JSON.stringify(record), 'utf8');
      const owned = stored.filter((record) => record.owner === 'owner-a');
      const sum = owned.reduce((total, record) => total + bytes(record), 0);
      expect(await after.insert(makeRecord({ owner: 'owner-a' }), { maxStored: 9, maxStoredBytes: sum })).toEqual({
        inserted: false,
        reason: 'limit',
        limit: 'stored_bytes',
      });
      expect(await after.insert(makeRecord(), { maxStored: 9, maxStoredBytes: sum + 1 })).toEqual({ inserted: true });
    } finally {
      await after.close();
    }
  });
});

/** A file at schema version 3 (the table without rowid, keyed by task id), holding `records` as that version wrote them. */
function versionThreeFile(path: string, records: TaskRecord[]): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const step of SQLITE_MIGRATIONS.slice(0, 3)) db.exec(step);
  db.pragma('user_version = 3');
  const insert = db.prepare(
    `INSERT INTO mcp_tasks (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data, tool, dialect)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of records) {
    insert.run(
      r.taskId,
      r.owner,
      r.status,
      r.createdAt,
      r.expiresAt,
      r.idempotencyKey ?? null,
      r.runner ?? null,
      r.leaseUntil ?? null,
      r.version,
      JSON.stringify(r),
      r.request.params['name'] as string,
      r.dialect,
    );
  }
  db.close();
}

describe('SqliteStore migration to the table clustered by insertion', () => {
  it('moves the tasks of a version 3 file into the rowid table in creation order, every read and count intact', async () => {
    const path = join(tempDir(), 'tasks.db');
    const now = Date.now();
    const first = makeRecord({ createdAt: now - 3000, idempotencyKey: 'key-1' });
    const leased = makeRecord({ createdAt: now - 2000, runner: 'runner-1', leaseUntil: now - 1 });
    const third = makeRecord({ createdAt: now - 1000, status: 'completed' });
    const otherOwner = makeRecord({ createdAt: now - 1500, owner: 'owner-b' });
    const records = [third, first, otherOwner, leased];
    versionThreeFile(path, records);

    const store = new SqliteStore({ path });
    await store.init();
    try {
      const db = new Database(path, { readonly: true });
      const table = db.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'mcp_tasks'`).pluck().get() as string;
      const order = db.prepare('SELECT task_id FROM mcp_tasks ORDER BY seq').pluck().all();
      const version = db.pragma('user_version', { simple: true });
      db.close();
      expect(table).not.toMatch(/WITHOUT ROWID/);
      expect(order).toEqual([first.taskId, leased.taskId, otherOwner.taskId, third.taskId]);
      expect(version).toBe(SQLITE_MIGRATIONS.length);

      for (const record of records) expect(await store.get(record.taskId)).toEqual(record);
      expect((await store.list('owner-a', { limit: 10, now })).map((r) => r.taskId)).toEqual([
        third.taskId,
        leased.taskId,
        first.taskId,
      ]);
      expect((await store.getByIdempotencyKey('owner-a', 'key-1'))?.taskId).toBe(first.taskId);
      expect((await store.findStale(now, 10)).map((r) => r.taskId)).toEqual([leased.taskId]);
      expect(await store.countActive('owner-a')).toBe(2);
      // The per-owner counter kept its counts through the rewrite (the old table was dropped without its triggers).
      expect(await store.insert(makeRecord(), { maxStored: 3 })).toEqual({
        inserted: false,
        reason: 'limit',
        limit: 'stored',
      });
      expect(await store.insert(makeRecord({ owner: 'owner-b' }), { maxStored: 2 })).toEqual({ inserted: true });
      expect(await store.insert({ ...first, owner: 'owner-c' })).toEqual({ inserted: false, reason: 'duplicate_id' });
      expect(await store.insert(makeRecord({ idempotencyKey: 'key-1' }))).toEqual({
        inserted: false,
        reason: 'duplicate_key',
        existing: first,
      });
      // The triggers were created again on the new table: a delete is counted.
      expect(await store.delete(third.taskId)).toBe(true);
      expect(await store.insert(makeRecord(), { maxStored: 3 })).toEqual({ inserted: true });
      expect(await store.replace({ ...leased, statusMessage: 'moved', version: 2 }, 1)).toBe(true);
      expect((await store.get(leased.taskId))?.statusMessage).toBe('moved');
    } finally {
      await store.close();
    }
  });

  it('appends new tasks after the migrated ones', async () => {
    const path = join(tempDir(), 'tasks.db');
    const old = makeRecord({ createdAt: Date.now() - 1000 });
    versionThreeFile(path, [old]);
    const store = new SqliteStore({ path });
    await store.init();
    const fresh = makeRecord();
    try {
      await store.insert(fresh);
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    const order = db.prepare('SELECT task_id FROM mcp_tasks ORDER BY seq').pluck().all();
    db.close();
    expect(order).toEqual([old.taskId, fresh.taskId]);
  });
});
