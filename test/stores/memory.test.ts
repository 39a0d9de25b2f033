import { MemoryStore } from '../../src/stores/memory/index.js';
import { storeContract } from './storeContract.js';

storeContract('memory', {
  async create() {
    const store = new MemoryStore();
    await store.init();
    return store;
  },
});
