import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  at: number;
  /** What the receiver answered: a status, or 'hang' (never answered). */
  answer?: number | 'hang';
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  url: string;
  received: Received[];
  /** Deliveries (not handshakes). */
  deliveries(): Received[];
  /** The next answers, in order, before the default 200 (a status, or 'hang' to never answer). */
  answers: Array<number | 'hang'>;
  /** The handshake's echo; `undefined`: the nonce received. */
  echo: string | undefined;
  /** Resolves once `n` deliveries arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A host's webhook endpoint on 127.0.0.1: records every POST, answers the verification handshake. */
export async function webhookReceiver(path = '/hooks/mcp'): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // recorded as it is
      }
      const entry: Received = { headers: req.headers, body, json, at: Date.now() };
      received.push(entry);
      for (const wake of waiters.splice(0)) wake();
      if (json['type'] === 'verification') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ challenge: receiver.echo ?? json['challenge'] }));
        return;
      }
      const answer = receiver.answers.shift() ?? 200;
      entry.answer = answer;
      if (answer === 'hang') return;
      res.writeHead(answer).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const deliveries = () => received.filter((r) => r.json['type'] !== 'verification');
  const receiver: WebhookReceiver = {
    origin,
    url: `${origin}${path}`,
    received,
    deliveries,
    answers: [],
    echo: undefined,
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries().length < n) {
        if (Date.now() > deadline) throw new Error(`waited for ${n} deliveries, got ${deliveries().length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return deliveries();
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
  return receiver;
}

/**
 * Deliveries in their task log's order: a subscription's queued events are sent in parallel, so they may arrive in
 * any order (the cursor rule, V86, is what keeps a receiver safe); control envelopes (`type`) keep their place after
 * them, where `terminated` always is.
 */
export function inLogOrder(deliveries: readonly Received[]): Received[] {
  const seq = (entry: Received) =>
    entry.json['type'] !== undefined
      ? Number.POSITIVE_INFINITY
      : Number(String(entry.json['eventId']).split(':').pop());
  return deliveries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => seq(a.entry) - seq(b.entry) || a.index - b.index)
    .map(({ entry }) => entry);
}
