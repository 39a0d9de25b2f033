import type { IncomingMessage } from 'node:http';

import { DEFAULT_MAX_REQUEST_BODY_SIZE } from '@modelcontextprotocol/server';

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
  if (Number(singleHeader(req.headers['content-length'])) > maxBytes) throw new RequestBodyTooLargeError(maxBytes);
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
        // What leaving the read early does to the stream: it is destroyed, nothing more is read.
        req.destroy();
        return done(new RequestBodyTooLargeError(maxBytes));
      }
      chunks.push(bytes);
    };
    const onEnd = () => done(undefined, received === 0 ? undefined : Buffer.concat(chunks, received).toString('utf8'));
    req.on('data', onData).on('end', onEnd).on('error', done);
  });
}

/**
 * The web-standard Request for a node:http request whose body was already read (what `toWebRequest` builds); its
 * `signal` is the one `signalOf` gives, asked for only when something reads it.
 */
export function webRequestOf(req: IncomingMessage, body: string | undefined, signalOf?: () => AbortSignal): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const host = singleHeader(req.headers['host']) ?? singleHeader(req.headers[':authority']) ?? 'localhost';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const request = new Request(`http://${host}${req.url ?? '/'}`, {
    method,
    headers,
    ...(body !== undefined && { body }),
  });
  // The exchange's signal itself, rather than one the constructor would make to follow it: undici links the two
  // through a FinalizationRegistry, some 20 µs a request, about a tenth of a plain call's server time. And only when
  // read: most handlers never do, and the exchange then needs no AbortController at all.
  if (signalOf !== undefined) Object.defineProperty(request, 'signal', { get: signalOf });
  return request;
}
