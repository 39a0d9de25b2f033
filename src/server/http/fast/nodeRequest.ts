import type { IncomingMessage } from 'node:http';

import { DEFAULT_MAX_REQUEST_BODY_SIZE } from '@modelcontextprotocol/server';

import { requestUrlOf } from '../../../protocol/index.js';

/** A body over the size limit, refused before it is all read (as the SDK's `toWebRequest` refuses it). */
export class RequestBodyTooLargeError extends Error {
  override readonly name = 'RequestBodyTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`Payload Too Large: Request body must not exceed ${maxBytes} bytes`);
  }
}

const singleHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The body of a node:http request as text, read once so both ways to answer it (the fast path and the SDK's) can use
 * it; undefined for GET and HEAD or an empty body. The limit is the SDK's default, checked on Content-Length first.
 */
export async function readNodeBody(
  req: IncomingMessage,
  maxBytes = DEFAULT_MAX_REQUEST_BODY_SIZE,
): Promise<string | undefined> {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'GET' || method === 'HEAD') return undefined;
  if (Number(singleHeader(req.headers['content-length'])) > maxBytes) {
    // Nothing read yet: up to twice the cap in all, as for a body found too large while reading.
    await discardRest(req, 2 * maxBytes);
    throw new RequestBodyTooLargeError(maxBytes);
  }
  // Stream events rather than an async iterator: the same bytes, without an iterator's promises per request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (error: unknown, body?: string) => {
      req.off('data', onData).off('end', onEnd).off('error', done);
      if (error) reject(error);
      else resolve(body);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.byteLength;
      if (received > maxBytes) {
        req.off('data', onData).off('end', onEnd).off('error', done);
        chunks.length = 0;
        return void discardRest(req, maxBytes).then(() => reject(new RequestBodyTooLargeError(maxBytes)));
      }
      chunks.push(bytes);
    };
    const onEnd = () => done(undefined, received === 0 ? undefined : Buffer.concat(chunks, received).toString('utf8'));
    req.on('data', onData).on('end', onEnd).on('error', done);
  });
}

/**
 * Reads and drops what is left of a body refused as too large, up to `maxBytes` more, and resolves once it is all
 * read (or the connection cut past the bound): the 413 that follows closes the connection, and a client still sending
 * into a closed connection gets a reset, which loses the response it has not read yet.
 */
function discardRest(req: IncomingMessage, maxBytes: number): Promise<void> {
  let drained = 0;
  const gone = new Promise<void>((resolve) => {
    req.once('end', resolve).once('close', resolve);
  });
  req.on('data', (chunk: Buffer | string) => {
    drained += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (drained > maxBytes) req.destroy();
  });
  req.resume();
  return gone;
}

/**
 * The web-standard Request for a node:http request whose body was already read (what `toWebRequest` builds); its
 * `signal` is the one `signalOf` gives, asked for only when something reads it.
 */
export function webRequestOf(req: IncomingMessage, body: string | undefined, signalOf?: () => AbortSignal): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const init = { method, headers, ...(body !== undefined && { body }) };
  // serveHttp refuses a request without such a URL before any is built; the fallback never routes anything.
  const url = requestUrlOf(req.headers.host, req.url) ?? 'http://localhost/';
  return signalOf === undefined ? new Request(url, init) : new ExchangeRequest(url, init, signalOf);
}

/**
 * A Request whose `signal` is the exchange's own, rather than one the constructor would make to follow it: undici
 * links the two through a FinalizationRegistry, some 20 µs a request, about a tenth of a plain call's server time.
 * And only when read: most handlers never do, and the exchange then needs no AbortController at all. The getter is
 * the class's, not the instance's: an accessor defined on each instance made V8 keep the whole exchange through every
 * scavenge until the next full collection (docs/architecture.md, "fast path").
 */
class ExchangeRequest extends Request {
  readonly #signalOf: () => AbortSignal;

  constructor(url: string, init: RequestInit, signalOf: () => AbortSignal) {
    super(url, init);
    this.#signalOf = signalOf;
  }

  static {
    // Defined here rather than as `get signal()` and `clone()`: the DOM types declare both properties, which a class
    // may not override with an accessor or a method.
    Object.defineProperty(ExchangeRequest.prototype, 'signal', {
      get(this: ExchangeRequest) {
        return this.#signalOf();
      },
    });
    // A clone's signal is the exchange's too (rare enough for an accessor of its own).
    const clone = Request.prototype.clone;
    Object.defineProperty(ExchangeRequest.prototype, 'clone', {
      value(this: ExchangeRequest): Request {
        const copy = clone.call(this);
        Object.defineProperty(copy, 'signal', { get: this.#signalOf });
        return copy;
      },
    });
  }
}
