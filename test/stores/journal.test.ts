import { eachStore } from './eachStore.js';
import { stepContract } from './stepContract.js';

eachStore(
  'journal',
  async (store) => {
    await store.init();
    await store.journal?.init();
    return store;
  },
  stepContract,
);
