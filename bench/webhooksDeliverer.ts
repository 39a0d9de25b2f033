// The delivering process of `npm run bench:webhooks`: delivers the outbox of a shared SQLite file until it is killed.
// argv: <path> <allowed origin> <leaseMs>
import { CallbackPolicy } from '../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../src/events/webhooks/OutboxWebhookDeliveries.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';

const [path, origin, leaseMs] = process.argv.slice(2) as [string, string, string];
const store = new SqliteStore({ path });
await store.init();
await store.webhooks.init();
const webhooks = new OutboxWebhookDeliveries({
  store: store.webhooks,
  policy: new CallbackPolicy({ allowOrigins: [origin] }),
  limits: { leaseMs: Number(leaseMs), timeoutMs: Math.max(500, Number(leaseMs) / 2), pollMs: 50 },
});
webhooks.start();
process.send?.('ready');
