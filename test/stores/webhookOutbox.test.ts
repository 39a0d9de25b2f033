import { eachStore } from './eachStore.js';
import { webhookOutboxContract } from './webhookOutboxContract.js';

eachStore(
  'webhooks',
  async (store) => {
    await store.init();
    await store.webhooks?.init();
    return store;
  },
  webhookOutboxContract,
);
