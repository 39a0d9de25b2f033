// `mcp-tasks/stores/redis`: tasks in Redis, shared by every instance, woken across processes by pub/sub.
export {
  RedisEventBus,
  RedisStore,
  type RedisEventBusOptions,
  type RedisStoreOptions,
} from '../../stores/redis/index.js';
