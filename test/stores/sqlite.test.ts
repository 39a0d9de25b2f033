import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
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
    for (let i = 0; i < 3; i++) await before.insert(makeRecord({ status: 'completed' }));
    await before.insert(makeRecord({ owner: 'owner-b' }));
    await before.close();
    // Back to the first schema version, as a file written before the counter existed.
    const db = new Database(path);
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
    } finally {
      await after.close();
    }
  });
});
