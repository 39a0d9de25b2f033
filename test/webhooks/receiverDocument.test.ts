import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const CERT = fixture('receiver-cert.pem');
const built = existsSync(
  fileURLToPath(new URL('../../dist/src/events/webhooks/ReceiverDocuments.js', import.meta.url)),
);

/**
 * spec V100 (d), EVENTS-SPEC §7.6: an https receiver's well-known document confirms the endpoint's intent. The
 * receiver is an https server with a test certificate for 127.0.0.1 (test/webhooks/fixtures); the subscribing side
 * is a child process that trusts it (NODE_EXTRA_CA_CERTS), its origin allowlisted as a private one would be.
 */
describe.skipIf(!built)("a receiver's well-known document (/.well-known/mcp-webhook-receiver.json)", () => {
  let server: Server;
  let origin: string;
  let document: unknown;
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer({ key: readFileSync(fixture('receiver-key.pem')), cert: readFileSync(CERT) }, (req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/.well-known/mcp-webhook-receiver.json' && document !== undefined) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify(document));
        }
        // A handshake is never echoed here: only the document can let a subscription in.
        res.writeHead(req.method === 'GET' ? 404 : 200, { 'content-type': 'application/json' });
        res.end(req.method === 'GET' ? '' : '{"challenge":"not-the-nonce"}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  async function subscribe(list: Array<{ owner: string; url: string }>): Promise<unknown[]> {
    requests.length = 0;
    const { stdout } = await run(process.execPath, [fixture('subscriber.mjs'), origin, JSON.stringify(list)], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT },
    });
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
  }

  it('lets callbacks under a listed prefix in without the handshake, reading the document once per origin', async () => {
    document = { receivers: ['/hooks/', '/exact'] };
    const outcomes = await subscribe([
      { owner: 'alice', url: `${origin}/hooks/mcp` },
      { owner: 'bob', url: `${origin}/hooks/other` },
      { owner: 'carol', url: `${origin}/exact/below` },
    ]);
    expect(outcomes).toEqual([
      { ok: true, id: expect.any(String) },
      { ok: true, id: expect.any(String) },
      { ok: true, id: expect.any(String) },
    ]);
    expect(requests).toEqual(['GET /.well-known/mcp-webhook-receiver.json']);
  });

  it('runs the handshake for a path it does not list, and for a prefix that only looks alike', async () => {
    document = { receivers: ['/hook'] };
    const outcomes = await subscribe([
      { owner: 'alice', url: `${origin}/hooksmith` },
      { owner: 'bob', url: `${origin}/elsewhere` },
    ]);
    const failed = { ok: false, kind: 'callback_endpoint_error', data: { reason: 'challenge_failed' } };
    expect(outcomes).toEqual([failed, failed]);
    expect(requests).toEqual(['GET /.well-known/mcp-webhook-receiver.json', 'POST /hooksmith', 'POST /elsewhere']);
  });

  it('treats a missing or malformed document as no consent', async () => {
    for (const given of [undefined, { receivers: '/hooks/' }, { receivers: ['https://elsewhere.example/hooks/'] }]) {
      document = given;
      const outcomes = await subscribe([{ owner: 'alice', url: `${origin}/hooks/mcp` }]);
      expect(outcomes).toEqual([{ ok: false, kind: 'callback_endpoint_error', data: { reason: 'challenge_failed' } }]);
      expect(requests).toEqual(['GET /.well-known/mcp-webhook-receiver.json', 'POST /hooks/mcp']);
    }
  });
});
