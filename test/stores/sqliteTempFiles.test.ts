import { execFile } from 'node:child_process';
import { watch } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { ROOT } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);

describe('SqliteStore group commits write no temporary files', () => {
  it('keeps the savepoint journal of a large shared transaction in memory', async () => {
    const tmp = tempDir();
    const seen: string[] = [];
    // SQLite creates a spilled journal in SQLITE_TMPDIR and unlinks it at once: only a watcher sees it.
    const watcher = watch(tmp, (_event, name) => seen.push(String(name)));
    const store = pathToFileURL(join(ROOT, 'dist/src/stores/sqlite/index.js')).href;
    const records = pathToFileURL(join(ROOT, 'dist/bench/benchRecord.js')).href;
    // 400 writes issued together share one transaction, each in its own savepoint: well past SQLite's 64 KiB spill.
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(store)});
      const { benchRecord } = await import(${JSON.stringify(records)});
      const store = new SqliteStore({ path: ${JSON.stringify(join(tempDir(), 'tasks.db'))} });
      await store.init();
      const big = 'x'.repeat(2000);
      const tasks = Array.from({ length: 400 }, (_, i) => ({ ...benchRecord(i, Date.now(), 10), statusMessage: big }));
      await Promise.all(tasks.map((task) => store.insert(task)));
      await Promise.all(tasks.map((task) => store.replace({ ...task, statusMessage: big + '!', version: 2 }, 1)));
      await store.close();
      console.log('ok');
    `;
    try {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, SQLITE_TMPDIR: tmp },
      });
      expect(stdout.trim()).toBe('ok');
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      watcher.close();
    }
    expect(seen).toEqual([]);
  });
});
