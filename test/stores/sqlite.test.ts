import { join } from 'node:path';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { storeContract } from './storeContract.js';

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
