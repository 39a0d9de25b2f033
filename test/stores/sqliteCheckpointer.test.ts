import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { Checkpointer } from '../../src/stores/sqlite/Checkpointer.js';
import { waitUntil } from './storeContract.js';
import { tempDir } from '../helpers/tmp.js';

function walDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (v INTEGER)');
  return db;
}

describe('Checkpointer: WAL checkpoints on a worker thread', () => {
  it('turns the connection’s automatic checkpoint off and copies committed pages into the database file itself', async () => {
    const dir = tempDir();
    const path = join(dir, 'tasks.db');
    const db = walDatabase(path);
    const failures: string[] = [];
    const checkpointer = new Checkpointer(path, (reason) => failures.push(reason));
    checkpointer.start(db);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 2000; i++) {
      insert.run(i);
      checkpointer.committed();
    }
    await waitUntil(() => checkpointer.checkpoints > 0, 5000);
    // The database file alone (no WAL beside it) now holds every committed row: the worker copied them there.
    const copy = join(dir, 'copy.db');
    copyFileSync(path, copy);
    const alone = new Database(copy, { readonly: true });
    expect(alone.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2000);
    alone.close();
    await checkpointer.close();
    expect(failures).toEqual([]);
    db.close();
  });

  it('asks for no checkpoint while nothing is committed', async () => {
    const path = join(tempDir(), 'tasks.db');
    const db = walDatabase(path);
    const checkpointer = new Checkpointer(path, () => {});
    checkpointer.start(db);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(checkpointer.checkpoints).toBe(0);
    await checkpointer.close();
    db.close();
  });

  it('reports a worker that cannot open the file, so the caller turns the automatic checkpoint back on', async () => {
    const dir = tempDir();
    const db = walDatabase(join(dir, 'tasks.db'));
    const failures: string[] = [];
    const checkpointer = new Checkpointer(join(dir, 'missing', 'tasks.db'), (reason) => failures.push(reason));
    checkpointer.start(db);
    await waitUntil(() => failures.length > 0, 5000);
    expect(failures[0]).toMatch(/directory does not exist|unable to open/);
    await checkpointer.close();
    db.close();
  });

  it('starts a new worker after a failure, so a passing fault does not stop the checkpoints for good', async () => {
    const dir = tempDir();
    const db = walDatabase(join(dir, 'tasks.db'));
    const failures: string[] = [];
    // The worker's file appears only after the first worker failed to open it: a fault that passes.
    const later = join(dir, 'later', 'tasks.db');
    const checkpointer = new Checkpointer(later, (reason) => failures.push(reason));
    checkpointer.start(db);
    await waitUntil(() => failures.length > 0, 5000);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    mkdirSync(join(dir, 'later'));
    const target = walDatabase(later);
    target.prepare('INSERT INTO t VALUES (1)').run();
    await waitUntil(() => checkpointer.checkpoints > 0, 10_000);
    expect(checkpointer.restarts).toBeGreaterThan(0);
    // The worker stands in for the connection's automatic checkpoint again; the failure was told once.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(failures).toHaveLength(1);
    await checkpointer.close();
    target.close();
    db.close();
  });
});
