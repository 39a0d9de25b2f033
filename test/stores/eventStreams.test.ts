import { eachStore } from './eachStore.js';
import { eventStreamContract } from './eventStreamContract.js';

eachStore(
  'eventstreams',
  async (store) => {
    await store.init();
    await store.eventStreams?.init();
    return store;
  },
  eventStreamContract,
);
