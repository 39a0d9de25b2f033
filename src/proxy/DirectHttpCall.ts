import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';

import type { RpcError } from './passthrough.js';
import { ErrorCodes, isObject } from '../protocol/index.js';

/** The 2025-era HTTP session a direct exchange joins (the one the SDK client opened). */
export interface DirectSession {
  sessionId: string | undefined;
  protocolVersion: string;
}

export interface DirectHooks {
  signal?: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** A notification on the exchange's stream that is not this call's progress. */
  onNotification(notification: { method: string; params?: Record<string, unknown> }): void;
  /** A request of the server on the exchange's stream (elicitation, sampling); its answer is posted back. */
  onRequest(request: {
    method: string;
    params?: Record<string, unknown>;
  }): Promise<{ result: Record<string, unknown> } | { error: RpcError }>;
}

export type DirectOutcome = { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: RpcError };

/** HTTP statuses that mean the request was refused unread (an expired session, say): the SDK path may retry it. */
const REFUSED_UNREAD = new Set([400, 401, 403, 404, 405, 406, 415]);

/** The exchange was refused before the server read the call; nothing ran, so the call may go another way. */
export class DirectRefusedError extends Error {}

type Message = Record<string, unknown>;

/** What node:http fails an aborted request with. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}

/**
 * One JSON-RPC request to a Streamable HTTP upstream over node:http with a keep-alive agent, on the session the SDK
 * client opened: the per-call cost of the proxy's hop stays small (no fetch, web streams or schema parse of the
 * answer, which is forwarded as it came). The answer may be JSON or an SSE stream, which can carry the call's
 * progress, other notifications and the server's own requests before the response.
 */
export class DirectHttpCall {
  private readonly agent: HttpAgent;
  /** Where every exchange goes, taken apart once rather than per request. */
  private readonly target: RequestOptions;
  private readonly send: typeof httpRequest;
  private nextId = 0;

  constructor(
    url: URL,
    private readonly headers: Record<string, string>,
  ) {
    const https = url.protocol === 'https:';
    // Keep-alive: the upstream hop reuses its connections instead of a TCP handshake per call.
    this.agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.target = { ...urlToHttpOptions(url), method: 'POST', agent: this.agent };
    this.send = https ? httpsRequest : httpRequest;
  }

  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    session: DirectSession,
    hooks: DirectHooks,
  ): Promise<DirectOutcome> {
    const id = `mcp-tasks-proxy-${++this.nextId}`;
    const meta = isObject(params?.['_meta']) ? params['_meta'] : {};
    const sent = hooks.onProgress ? { ...params, _meta: { ...meta, progressToken: id } } : params;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, ...(sent && { params: sent }) });
    const response = await this.post(body, session, hooks.signal);
    if (response.statusCode !== 200) {
      response.resume();
      const status = response.statusCode ?? 0;
      if (REFUSED_UNREAD.has(status)) throw new DirectRefusedError(`HTTP ${status}`);
      throw new Error(`HTTP ${status}`);
    }
    const onAbort = () => {
      // The 2025-11-25 way to stop a request: notifications/cancelled, then the stream is no longer read.
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } };
      void this.post(JSON.stringify(cancel), session).then(
        (answer) => answer.resume(),
        () => {},
      );
      response.destroy();
    };
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = await this.readAnswer(response, id, session, hooks);
      if (isObject(answer['error'])) return { kind: 'error', error: answer['error'] as unknown as RpcError };
      if (isObject(answer['result'])) return { kind: 'result', result: answer['result'] };
      throw new Error('a response with neither result nor error');
    } catch (error) {
      if (hooks.signal?.aborted) throw hooks.signal.reason instanceof Error ? hooks.signal.reason : error;
      throw error;
    } finally {
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private post(body: string, session: DirectSession, signal?: AbortSignal): Promise<IncomingMessage> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = this.send({
        ...this.target,
        headers: {
          ...this.headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': session.protocolVersion,
          ...(session.sessionId !== undefined && { 'mcp-session-id': session.sessionId }),
        },
      });
      // Until the answer starts, an abort drops the exchange (then the caller's own abort handling takes over). A
      // listener of our own: the `signal` option of http.request costs more per request.
      const onAbort = () => request.destroy(abortError(signal as AbortSignal));
      signal?.addEventListener('abort', onAbort, { once: true });
      request.once('response', (response) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(response);
      });
      request.once('error', (error: NodeJS.ErrnoException) => {
        signal?.removeEventListener('abort', onAbort);
        // A pooled connection the upstream closed while idle (its keep-alive timeout) fails at once on reuse; the
        // server never read the call, so it may go another way (Node's documented remedy for this race).
        if (request.reusedSocket && error.code === 'ECONNRESET') reject(new DirectRefusedError(error.message));
        else reject(error);
      });
      request.end(body);
    });
  }

  /**
   * Reads the answer (JSON or SSE) up to the response to `id`, handling what comes before it. The rest of the stream
   * is still read to its end, so the connection goes back to the agent's pool.
   */
  private readAnswer(
    response: IncomingMessage,
    id: string,
    session: DirectSession,
    hooks: DirectHooks,
  ): Promise<Message> {
    response.setEncoding('utf8');
    const sse = (response.headers['content-type'] ?? '').includes('text/event-stream');
    return new Promise<Message>((resolve, reject) => {
      let buffered = '';
      let settled = false;
      const settle = (answer: Message | undefined) => {
        if (!answer || settled) return;
        settled = true;
        resolve(answer);
      };
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      response.on('data', (chunk: string) => {
        buffered += chunk;
        if (!sse) return;
        try {
          let end: number;
          while ((end = buffered.search(/\r?\n\r?\n/)) >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + (buffered[end] === '\r' ? 4 : 2));
            const data = event
              .split(/\r?\n/)
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart())
              .join('\n');
            // Empty data: a priming event of a resumable stream.
            if (data.length > 0) settle(this.handle(JSON.parse(data) as Message, id, session, hooks));
          }
        } catch (error) {
          fail(error);
          response.destroy();
        }
      });
      response.once('end', () => {
        try {
          if (!sse && buffered.trim().length > 0) {
            const parsed = JSON.parse(buffered) as Message | Message[];
            for (const message of Array.isArray(parsed) ? parsed : [parsed])
              settle(this.handle(message, id, session, hooks));
          }
        } catch (error) {
          fail(error);
        }
        fail(new Error('the upstream ended its answer without a response'));
      });
      response.once('error', fail);
      response.once('close', () => fail(new Error('the upstream closed the connection before its response')));
    });
  }

  /** The response to `id`, or undefined after dispatching anything else. */
  private handle(message: Message, id: string, session: DirectSession, hooks: DirectHooks): Message | undefined {
    const method = message['method'];
    if (typeof method !== 'string') return message['id'] === id ? message : undefined;
    const params = isObject(message['params']) ? message['params'] : undefined;
    if (message['id'] !== undefined && message['id'] !== null) {
      const requestId = message['id'];
      void hooks
        .onRequest({ method, ...(params && { params }) })
        .catch((error: unknown) => ({
          error: { code: ErrorCodes.INTERNAL_ERROR, message: error instanceof Error ? error.message : String(error) },
        }))
        .then((answer) =>
          this.post(JSON.stringify({ jsonrpc: '2.0', id: requestId, ...answer }), session).then((r) => r.resume()),
        )
        .catch(() => {});
      return undefined;
    }
    if (method === 'notifications/progress' && params?.['progressToken'] === id) {
      const { progressToken: _token, ...progress } = params;
      hooks.onProgress?.(progress as { progress: number; total?: number; message?: string });
      return undefined;
    }
    hooks.onNotification({ method, ...(params && { params }) });
    return undefined;
  }
}
