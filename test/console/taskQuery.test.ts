import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseTaskQuery, readTaskPage } from '../../src/console/TaskQuery.js';
import type { TaskBrowseStore, TaskStore } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { makeRecord } from '../helpers/records.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The list on SQLite, where the tool and generation filters are index ranges and the text search runs in SQL, shows
 * what the memory store shows, which reads the tasks and checks each: every page, following the cursors.
 */
describe('console list pages: store-side filters and search read what the per-task checks read', () => {
  const base = Date.now();
  let stores: TaskStore[];

  beforeAll(async () => {
    stores = [new MemoryStore(), new SqliteStore({ path: join(tempDir(), 'tasks.db') })];
    for (const store of stores) {
      await store.init();
      await store.browse?.init();
    }
    for (let i = 0; i < 3000; i++) {
      const record = makeRecord({
        taskId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        owner: `owner-${i % 7}`,
        createdAt: base - i,
        dialect: ['core-2025-11-25', 'ext-tasks', 'sep-1686'][i % 3] as string,
        request: {
          method: 'tools/call',
          params: {
            name: ['index', 'render', 'sync'][i % 5 === 0 ? 0 : i % 2 === 0 ? 1 : 2],
            arguments: { item: `Item-${i}`, n: i },
          },
        },
      });
      for (const store of stores) await store.insert(record);
    }
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  /** Every page of a query, following the cursors: the ids of each page and how far each read. */
  async function pages(browse: TaskBrowseStore, search: string): Promise<string[][]> {
    const all: string[][] = [];
    let cursor: string | undefined;
    do {
      const params = new URLSearchParams(search);
      if (cursor) params.set('cursor', cursor);
      const page = await readTaskPage(browse, parseTaskQuery(params, 50), base + 1);
      all.push(page.tasks.map((task) => task.taskId));
      cursor = page.nextCursor;
    } while (cursor && all.length < 200);
    return all;
  }

  for (const search of [
    'tool=index&generation=sep-1686',
    'tool=render',
    'generation=ext-tasks&status=working',
    'q=item-12',
    'q=ITEM-299',
    'q=00000000-0000-4000-8000-00000000100',
    'q=item-2&owner=owner-3',
    'q=nothing-matches-this',
    'q=item-1&tool=sync',
  ]) {
    it(search, async () => {
      const [memory, sqlite] = (await Promise.all(
        stores.map((store) => pages(store.browse as TaskBrowseStore, search)),
      )) as [string[][], string[][]];
      if (!search.includes('nothing')) expect(sqlite.flat().length).toBeGreaterThan(0);
      // The same tasks in the same order; where the pages break may differ (the budget counts the range read).
      expect(sqlite.flat()).toEqual(memory.flat());
      for (const page of sqlite) expect(page.length).toBeLessThanOrEqual(50);
    });
  }
});
