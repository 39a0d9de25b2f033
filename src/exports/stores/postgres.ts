// `mcp-tasks/stores/postgres`: tasks in PostgreSQL, shared by every instance, woken across processes by LISTEN/NOTIFY.
export {
  PgEventBus,
  PostgresStore,
  type PgEventBusOptions,
  type PostgresStoreOptions,
} from '../../stores/postgres/index.js';
