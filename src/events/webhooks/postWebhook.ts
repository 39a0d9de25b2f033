import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

import type { WebhookFailure } from './WebhookFailure.js';
import { isPublicAddress } from './publicAddress.js';

/** How long an attempt may take, connection to last byte (spec V92). */
export const WEBHOOK_TIMEOUT_MS = 5000;
/** The most of a response body read (the handshake's echo); the rest is dropped unread. */
const MAX_RESPONSE_BYTES = 4096;

export interface PostOutcome {
  ok: boolean;
  status?: number;
  failure?: WebhookFailure;
  /** The first bytes of a 2xx body, only for the handshake to compare; never reported anywhere. */
  body?: string;
}

/** A refused address (or a lookup that failed), told apart from connection errors. */
class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED';
}

/**
 * A lookup that resolves every address of the host and refuses the connection unless all are globally routable, so
 * the socket connects to an address checked at this moment (spec V99: DNS rebinding between subscribe and delivery
 * finds a check at every connect). The request keeps the original Host and TLS server name.
 */
function guardedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (addresses.length === 0 || !addresses.every((entry) => isPublicAddress(entry.address)))
        return callback(new AddressRefused(`${hostname} resolves to an address that is not globally routable`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

const agents = {
  guarded: {
    http: new http.Agent({ keepAlive: true, lookup: guardedLookup() }),
    https: new https.Agent({ keepAlive: true, lookup: guardedLookup() }),
  },
  open: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

/** True when the host of `url` is an IP literal that is not globally routable. */
function literalRefused(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/** Resolves the host of `url` and says whether every address is globally routable (checked at subscribe). */
export async function resolvesPublicly(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isPublicAddress(host);
  try {
    const addresses = await dnsPromises.lookup(host, { all: true });
    return addresses.length > 0 && addresses.every((entry) => isPublicAddress(entry.address));
  } catch {
    return true; // unresolvable now: the delivery-time check decides (and fails the handshake as unreachable)
  }
}

function failureOf(error: unknown): WebhookFailure {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return 'timeout';
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(code) || /SSL|TLS/.test(code))
    return 'tls_error';
  return 'connection_refused';
}

/**
 * One POST of a signed body. Redirects are not followed (a 3xx is a failed attempt, counted as `http_4xx`; spec V91);
 * the address check applies unless `open` (an allowlisted origin).
 */
export function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  open: boolean,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
): Promise<PostOutcome> {
  return send('POST', url, headers, body, open, timeoutMs, MAX_RESPONSE_BYTES);
}

/** One GET on the same guarded path (a receiver's well-known document), its 2xx body read up to `maxBytes`. */
export function getWebhookDocument(url: URL, open: boolean, timeoutMs: number, maxBytes: number): Promise<PostOutcome> {
  return send('GET', url, { accept: 'application/json' }, undefined, open, timeoutMs, maxBytes);
}

function send(
  method: 'GET' | 'POST',
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  open: boolean,
  timeoutMs: number,
  maxBytes: number,
): Promise<PostOutcome> {
  if (!open && literalRefused(url)) return Promise.resolve({ ok: false, failure: 'connection_refused' });
  const secure = url.protocol === 'https:';
  const agent = (open ? agents.open : agents.guarded)[secure ? 'https' : 'http'];
  const request = secure ? https.request : http.request;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(
      url,
      {
        method,
        agent,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (!ok || size >= maxBytes) return;
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => {
          if (ok) finish({ ok, status, body: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8') });
          else finish({ ok, status, failure: status >= 500 ? 'http_5xx' : 'http_4xx' });
        });
        res.on('error', (error) => finish({ ok: false, failure: failureOf(error) }));
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, failure: 'timeout' });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish({ ok: false, failure: failureOf(error) }));
    req.end(body);
  });
}
