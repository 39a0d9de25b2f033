import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { WebhookError } from '../../src/events/webhooks/WebhookError.js';
import { postWebhook, resolvesPublicly } from '../../src/events/webhooks/postWebhook.js';
import { isPublicAddress } from '../../src/events/webhooks/publicAddress.js';

interface Receiver {
  origin: string;
  hits: string[];
  server: Server;
}

async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    req.on('end', () => handle(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return { origin: `http://127.0.0.1:${port}`, hits, server };
}

describe('callback URLs: which addresses may be reached (SSRF)', () => {
  // spec V98: the IANA special-purpose ranges are not globally routable.
  it('tells public addresses from loopback, private, link-local, metadata and embedded forms', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254', // cloud metadata
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254', // AWS metadata over IPv6
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      'not-an-ip',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  // spec V62, V97
  it('accepts only https URLs without credentials, unless the operator allowlisted the origin', () => {
    const policy = new CallbackPolicy({ allowOrigins: ['http://127.0.0.1:9999'] });
    const refusal = (url: unknown) => {
      try {
        policy.parse(url);
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookError);
        return (error as WebhookError).kind;
      }
      return 'accepted';
    };
    expect(refusal('https://hooks.example.com/in')).toBe('accepted');
    expect(refusal('http://hooks.example.com/in')).toBe('invalid_params');
    expect(refusal('ftp://hooks.example.com/in')).toBe('invalid_params');
    expect(refusal('https://user:pw@hooks.example.com/in')).toBe('invalid_params');
    expect(refusal('not a url')).toBe('invalid_params');
    expect(refusal(42)).toBe('invalid_params');
    expect(refusal(`https://hooks.example.com/${'a'.repeat(2100)}`)).toBe('invalid_params');
    expect(refusal('http://127.0.0.1:9999/hook')).toBe('accepted');
    expect(refusal('http://127.0.0.1:9998/hook')).toBe('invalid_params');
    expect(policy.isAllowedOrigin(new URL('http://127.0.0.1:9999/x'))).toBe(true);
    expect(policy.isAllowedOrigin(new URL('http://127.0.0.1:9998/x'))).toBe(false);
    expect(
      new CallbackPolicy({ trustedPrefixes: ['https://hooks.example.com/in/'] }).isTrusted(
        'https://hooks.example.com/in/a',
      ),
    ).toBe(true);
  });

  // spec V98: a name whose DNS answer is loopback counts as loopback.
  it('judges a host by what it resolves to', async () => {
    expect(await resolvesPublicly(new URL('https://localhost/hook'))).toBe(false);
    expect(await resolvesPublicly(new URL('https://127.0.0.1/hook'))).toBe(false);
    expect(await resolvesPublicly(new URL('https://[::1]/hook'))).toBe(false);
    expect(await resolvesPublicly(new URL('https://169.254.169.254/latest/meta-data'))).toBe(false);
    expect(await resolvesPublicly(new URL('https://8.8.8.8/hook'))).toBe(true);
  });

  describe('at delivery time (spec V99)', () => {
    let ok: Receiver;
    let target: Receiver;
    let redirect: Receiver;
    let slow: Receiver;
    let failing: Receiver;
    beforeAll(async () => {
      ok = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}'));
      target = await receiver((_req, res) => res.writeHead(200).end());
      redirect = await receiver((_req, res) => res.writeHead(302, { location: `${target.origin}/stolen` }).end());
      slow = await receiver((_req, res) => setTimeout(() => res.writeHead(200).end(), 2000));
      failing = await receiver((_req, res) => res.writeHead(503).end('busy: internal detail'));
    });
    afterAll(() => {
      for (const r of [ok, target, redirect, slow, failing]) {
        r.server.closeAllConnections();
        r.server.close();
      }
    });

    it('refuses a loopback literal without connecting', async () => {
      const outcome = await postWebhook(new URL(`${ok.origin}/hook`), {}, '{}', false);
      expect(outcome).toEqual({ ok: false, failure: 'connection_refused' });
      expect(ok.hits).toEqual([]);
    });

    it('refuses a metadata address without connecting', async () => {
      const started = Date.now();
      const outcome = await postWebhook(new URL('http://169.254.169.254/latest/meta-data'), {}, '{}', false, 10_000);
      expect(outcome).toEqual({ ok: false, failure: 'connection_refused' });
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('refuses a name that resolves to loopback at connect time', async () => {
      const port = new URL(ok.origin).port;
      const outcome = await postWebhook(new URL(`http://localhost:${port}/hook`), {}, '{}', false);
      expect(outcome).toEqual({ ok: false, failure: 'connection_refused' });
      expect(ok.hits).toEqual([]);
    });

    it('reaches an allowlisted origin and reads the start of a 2xx body', async () => {
      const policy = new CallbackPolicy({ allowOrigins: [ok.origin] });
      const url = policy.parse(`${ok.origin}/hook`);
      const outcome = await postWebhook(url, { 'content-type': 'application/json' }, '{}', policy.isAllowedOrigin(url));
      expect(outcome).toEqual({ ok: true, status: 200, body: '{"a":1}' });
      expect(ok.hits).toEqual(['/hook']);
    });

    // spec V91: a 3xx is a failed attempt and the Location is never visited.
    it('does not follow redirects', async () => {
      const outcome = await postWebhook(new URL(`${redirect.origin}/hook`), {}, '{}', true);
      expect(outcome).toEqual({ ok: false, status: 302, failure: 'http_4xx' });
      expect(redirect.hits).toEqual(['/hook']);
      expect(target.hits).toEqual([]);
    });

    // spec V94: a category only, never the endpoint's answer.
    it('reports a failure as its category only', async () => {
      const outcome = await postWebhook(new URL(`${failing.origin}/hook`), {}, '{}', true);
      expect(outcome).toEqual({ ok: false, status: 503, failure: 'http_5xx' });
      expect(JSON.stringify(outcome)).not.toContain('busy');
    });

    // spec V92: the wait is bounded; running out is the `timeout` category.
    it('gives up after the timeout', async () => {
      const started = Date.now();
      const outcome = await postWebhook(new URL(`${slow.origin}/hook`), {}, '{}', true, 200);
      expect(outcome).toEqual({ ok: false, failure: 'timeout' });
      expect(Date.now() - started).toBeLessThan(1500);
    });

    it('reports a closed port as connection_refused', async () => {
      const closed = await receiver(() => undefined);
      const origin = closed.origin;
      closed.server.close();
      await once(closed.server, 'close');
      expect(await postWebhook(new URL(`${origin}/hook`), {}, '{}', true)).toEqual({
        ok: false,
        failure: 'connection_refused',
      });
    });
  });
});
