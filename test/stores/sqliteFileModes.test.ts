import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { makeRecord } from '../helpers/records.js';
import { tempDir } from '../helpers/tmp.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('SqliteStore file modes', () => {
  it('creates the database, its WAL and shared-memory files 0600 and the directories it makes 0700', async () => {
    const dir = join(tempDir(), 'made', 'by-store');
    const path = join(dir, 'tasks.db');
    const store = new SqliteStore({ path });
    await store.init();
    try {
      // A leased task makes the runner's liveness lock beside the store.
      await store.insert(makeRecord({ runner: 'runner-1', leaseUntil: Date.now() + 60_000 }));
      expect(modeOf(dir)).toBe(0o700);
      expect(modeOf(join(dir, '..'))).toBe(0o700);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect([file, modeOf(file)]).toEqual([file, 0o600]);
      const runners = `${path}.runners`;
      expect(modeOf(runners)).toBe(0o700);
      const locks = readdirSync(runners);
      expect(locks.length).toBeGreaterThan(0);
      for (const lock of locks) expect([lock, modeOf(join(runners, lock))]).toEqual([lock, 0o600]);
    } finally {
      await store.close();
    }
  });
});
