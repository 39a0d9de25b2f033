import { join } from 'node:path';

import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { stepContract } from './stepContract.js';

const open = async <T extends { init(): Promise<void>; journal?: { init(): Promise<void> } }>(store: T): Promise<T> => {
  await store.init();
  await store.journal?.init();
  return store;
};

stepContract('memory', { create: () => open(new MemoryStore()) });

const paths = new WeakMap<object, string>();
stepContract('sqlite', {
  async create() {
    const path = join(tempDir(), 'journal.db');
    const store = await open(new SqliteStore({ path }));
    paths.set(store, path);
    return store;
  },
  sibling: async (store) => open(new SqliteStore({ path: paths.get(store) as string })),
});
