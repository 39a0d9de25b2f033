import type { TaskClient, WebhookGrant } from '../../client/index.js';
import { generateWebhookSecret } from '../../events/webhooks/index.js';
import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import { onInterrupt } from '../interrupts.js';
import type { Reporter, WebhookDelivery } from '../Reporter.js';
import { WebhookListener } from '../WebhookListener.js';
import { eventArguments, wholeNumber, type EventsTargetOptions } from './events.js';

export interface EventsWebhookOptions extends EventsTargetOptions {
  port: string;
  ttlMs?: string;
}

/** Refresh a grant when this share of its time is used up (spec V74: before `refreshBefore`). */
const REFRESH_AT = 0.8;

/**
 * `events webhook <type>`: receives the type's events by webhook on 127.0.0.1 to try the mode out. It listens on a
 * random path, subscribes with that URL and a fresh secret (the server's handshake is answered, V101), prints each
 * delivery whose signature verifies, refreshes the grant before it lapses with the last cursor received (V74), and
 * ends with the subscription (a `terminated` envelope: a task's types end with the task), or on Ctrl-C, unsubscribing.
 * The server must allow the callback's origin: loopback URLs are refused by default (SSRF, V98).
 */
export async function runEventsWebhook(
  name: string,
  pairs: string[],
  options: EventsWebhookOptions,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const args = eventArguments(pairs, options);
  const port = wholeNumber(options.port, '--port') ?? 0;
  const ttlMs = wholeNumber(options.ttlMs, '--ttl-ms');
  const secret = generateWebhookSecret();
  let ended: (code: ExitCode) => void = () => undefined;
  const done = new Promise<ExitCode>((resolve) => (ended = resolve));
  let cursor: string | null = options.cursor ?? null;
  const onDelivery = (delivery: WebhookDelivery) => {
    reporter.webhook(delivery);
    const { payload } = delivery;
    if (typeof payload['cursor'] === 'string') cursor = payload['cursor'];
    if (payload['type'] === 'terminated') ended(EXIT_CODES.completed);
  };
  const listener = await WebhookListener.listen(port, secret, onDelivery);
  let client: TaskClient | undefined;
  let refresh: NodeJS.Timeout | undefined;
  let stopListening = () => undefined as unknown;
  let subscribed = false;
  try {
    client = await openClient(global, server, reporter);
    const events = client.events();
    const subscribe = async (): Promise<void> => {
      const grant = await events.subscribe(name, args, {
        url: listener.url,
        secret,
        cursor,
        ...(ttlMs !== undefined && { ttlMs }),
      });
      subscribed = true;
      schedule(grant);
    };
    const schedule = (grant: WebhookGrant) => {
      if (grant.refreshBefore === null) return;
      const delay = Math.max(1000, (Date.parse(grant.refreshBefore) - Date.now()) * REFRESH_AT);
      refresh = setTimeout(() => {
        subscribe().catch((error: unknown) => {
          reporter.error(error);
          ended(EXIT_CODES.failed);
        });
      }, delay);
    };
    await subscribe();
    reporter.note(`Receiving ${name} on ${listener.url} (Ctrl-C unsubscribes)`);
    stopListening = onInterrupt(
      () => ended(EXIT_CODES.interrupted),
      () => ended(EXIT_CODES.interrupted),
    );
    const code = await done;
    if (code === EXIT_CODES.interrupted && subscribed) {
      subscribed = false;
      await events.unsubscribe(name, args, listener.url).catch((error: unknown) => reporter.error(error));
    }
    return code;
  } finally {
    clearTimeout(refresh);
    stopListening();
    await client?.close();
    await listener.close();
  }
}
