// A host's webhook endpoint on 127.0.0.1 for the webhook benches: verifies every delivery with the current secret,
// answers the verification handshake, records each delivery as it arrives (with its arrival time), and can leave
// some requests unanswered so that the delivering process dies holding them.
import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';

import { verifyWebhook } from '../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../src/events/webhooks/webhookSecret.js';

/** One delivery received: its webhook-id, whether it was answered, when it arrived (epoch ms) and its body. */
export interface WebhookHit {
  id: string;
  answered: boolean;
  at: number;
  payload: Record<string, unknown>;
}

/** Epoch ms with sub-millisecond resolution, comparable across processes of one machine. */
export const preciseNow = () => performance.timeOrigin + performance.now();

export class WebhookReceiver {
  readonly hits: WebhookHit[] = [];
  /** Requests still to leave unanswered (each one counted down as it arrives). */
  hang = 0;
  /** The secret deliveries are verified with; set a fresh one per subscription. */
  secret = generateWebhookSecret();
  private readonly arrivals = new Map<string, (hit: WebhookHit) => void>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.received(req.headers, Buffer.concat(chunks), res));
    });
    return receiver;
  }

  /** A fresh secret, for the next subscription. */
  newSecret(): string {
    this.secret = generateWebhookSecret();
    return this.secret;
  }

  /** Resolves with the delivery of `id` when it arrives (register before it can arrive). */
  arrival(id: string): Promise<WebhookHit> {
    return new Promise((resolve) => this.arrivals.set(id, resolve));
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }

  private received(headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse): void {
    const at = preciseNow();
    const delivery = verifyWebhook(headers, body, this.secret);
    const payload = delivery.payload as Record<string, unknown>;
    if (payload['type'] === 'verification') {
      res.end(JSON.stringify({ challenge: payload['challenge'] }));
      return;
    }
    const hit = { id: delivery.id, answered: this.hang === 0, at, payload };
    this.hits.push(hit);
    this.arrivals.get(delivery.id)?.(hit);
    this.arrivals.delete(delivery.id);
    if (this.hang > 0) {
      this.hang--;
      return; // never answered: the process dies holding it
    }
    res.writeHead(204).end();
  }
}
