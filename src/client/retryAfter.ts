import { ProtocolError, type Client } from '@modelcontextprotocol/client';

import { ErrorCodes } from '../protocol/index.js';
import type { RpcErrorObject } from './TaskClientError.js';

/** Refusals honoured at most this many times in a row for one request, each wait capped at `MAX_WAIT_MS`. */
const MAX_RETRIES = 8;
const MAX_WAIT_MS = 30_000;

/** How long a rate-limit refusal (`-32600` with `data.retryAfterMs`) asks the client to wait, if it is one. */
export function retryAfterMsOf(error: RpcErrorObject | unknown): number | undefined {
  const rpc = error instanceof ProtocolError ? { code: error.code, data: error.data } : error;
  if (typeof rpc !== 'object' || rpc === null) return undefined;
  const { code, data } = rpc as { code?: unknown; data?: unknown };
  if (code !== ErrorCodes.INVALID_REQUEST || typeof data !== 'object' || data === null) return undefined;
  const wait = (data as Record<string, unknown>)['retryAfterMs'];
  return typeof wait === 'number' && Number.isFinite(wait) && wait >= 0 ? Math.min(wait, MAX_WAIT_MS) : undefined;
}

/**
 * Sends again after the wait a refusal asked for, a few times: the server refused before doing anything, so the
 * request is safe to repeat. `refusal` tells a refused outcome (thrown or returned) and its wait.
 */
export async function honouringRetryAfter<T>(
  send: () => Promise<T>,
  refusal: (outcome: { value: T } | { error: unknown }) => number | undefined,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: await send() };
    } catch (error) {
      outcome = { error };
    }
    const wait = attempt < MAX_RETRIES && signal?.aborted !== true ? refusal(outcome) : undefined;
    if (wait === undefined) {
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
    // A little jitter so clients refused together do not all come back in the same instant.
    await sleep(wait + Math.floor(Math.random() * 20), signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The SDK client with its `request` honouring rate-limit refusals; everything else is the client itself. */
export function honouringClient(client: Client): Client {
  const request = (...args: Parameters<Client['request']>) =>
    honouringRetryAfter(
      () => client.request(...args),
      (outcome) => ('error' in outcome ? retryAfterMsOf(outcome.error) : undefined),
      args[2]?.signal,
    );
  return Object.create(client, { request: { value: request } }) as Client;
}
