import { browseContract } from './browseContract.js';
import { eachStore } from './eachStore.js';
import { timelineContract } from './timelineContract.js';

eachStore(
  'timeline',
  async (store) => {
    await store.init();
    await store.timeline?.init();
    await store.browse?.init();
    return store;
  },
  (name, harness) => {
    timelineContract(name, harness);
    browseContract(name, harness);
  },
);
