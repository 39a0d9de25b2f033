import { eachStore } from './eachStore.js';
import { eventLogContract } from './eventLogContract.js';

eachStore(
  'eventlog',
  async (store) => {
    await store.init();
    await store.eventLog?.init();
    return store;
  },
  eventLogContract,
);
