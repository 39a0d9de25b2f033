import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { verifyWebhook, WebhookVerificationError } from '../events/webhooks/index.js';
import type { WebhookDelivery } from './Reporter.js';

/** The largest body taken: the server bounds a delivery's body at 256 KiB (spec V90). */
const MAX_BODY_BYTES = 256 * 1024;
/** Webhook ids remembered to drop a retry of a delivery already shown (retries keep the `webhook-id`). */
const SEEN_IDS = 1000;

/**
 * A webhook endpoint on 127.0.0.1 for trying the Events extension out (`mcp-tasks events webhook`): it answers the
 * verification handshake (spec V101), checks every delivery's signature with the subscription's secret (answering 401
 * when it does not verify), drops retries it already took, and hands each delivery on. The path is random, so only
 * the server told of it posts there.
 */
export class WebhookListener {
  private readonly server: Server;
  private readonly seen = new Set<string>();
  private readonly path = `/mcp-tasks/webhooks/${randomUUID()}`;

  private constructor(
    private readonly secret: string,
    private readonly onDelivery: (delivery: WebhookDelivery) => void,
  ) {
    this.server = createServer((request, response) => this.serve(request, response));
  }

  /** Listens on 127.0.0.1:`port` (0 picks one). */
  static async listen(
    port: number,
    secret: string,
    onDelivery: (delivery: WebhookDelivery) => void,
  ): Promise<WebhookListener> {
    const listener = new WebhookListener(secret, onDelivery);
    listener.server.listen(port, '127.0.0.1');
    await Promise.race([
      once(listener.server, 'listening'),
      once(listener.server, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
    return listener;
  }

  get url(): string {
    const { port } = this.server.address() as { port: number };
    return `http://127.0.0.1:${port}${this.path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'POST' || request.url !== this.path) {
      response.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        response.writeHead(413).end();
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let verified;
      try {
        verified = verifyWebhook(request.headers, Buffer.concat(chunks), this.secret);
      } catch (error) {
        response.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
        return;
      }
      const payload = verified.payload;
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
        response.writeHead(400).end();
        return;
      }
      const body = payload as Record<string, unknown>;
      if (body['type'] === 'verification') {
        // spec V101: the endpoint's consent is the challenge echoed back.
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ challenge: body['challenge'] }));
        return;
      }
      response.writeHead(204).end();
      if (this.seen.has(verified.id)) return;
      this.seen.add(verified.id);
      if (this.seen.size > SEEN_IDS) this.seen.delete(this.seen.values().next().value as string);
      this.onDelivery({ webhookId: verified.id, subscriptionId: verified.subscriptionId, payload: body });
    });
  }
}
