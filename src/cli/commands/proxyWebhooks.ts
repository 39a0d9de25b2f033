import { CallbackPolicy, OutboxWebhookDeliveries } from '../../events/webhooks/index.js';
import { createStore, DEFAULT_STORE } from '../../server/index.js';
import { UsageError } from '../UsageError.js';

/** The proxy's webhook delivery: the opened task store, and deliveries from its durable outbox. */
export interface ProxyWebhooks {
  store: Awaited<ReturnType<typeof createStore>>;
  webhooks: OutboxWebhookDeliveries;
}

/**
 * `proxy --webhooks` / `--webhook-allow-origin`: opens the task store here, so the deliveries are built over the
 * same store the proxy's tasks are in (every proxy on that store delivers from one outbox). Allowed origins are let
 * past the https and public-address guards (a loopback receiver to try it out); the handshake still runs.
 */
export async function proxyWebhooks(spec: string | undefined, allowOrigins: readonly string[]): Promise<ProxyWebhooks> {
  for (const origin of allowOrigins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
      throw new UsageError(
        `--webhook-allow-origin is an http(s) origin such as http://127.0.0.1:8080; got "${origin}"`,
      );
  }
  const store = await createStore(spec ?? DEFAULT_STORE);
  await store.init();
  if (!store.webhooks) {
    await store.close();
    throw new UsageError('--webhooks: this task store keeps no webhook outbox');
  }
  await store.webhooks.init();
  const webhooks = new OutboxWebhookDeliveries({
    store: store.webhooks,
    policy: new CallbackPolicy({ allowOrigins }),
  });
  return { store, webhooks };
}
