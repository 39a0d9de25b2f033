import { DispatchError, type JsonRpcResponse, type RawClientDispatch } from '@modelcontextprotocol/ext-tasks/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';

type JsonObject = { [key: string]: JsonValue };

/** One request `rawDispatch` put on the wire, with the headers it sent and what came back. */
export interface RawExchange {
  readonly request: JsonObject & { id: string; method: string; params?: JsonObject };
  readonly headers: Record<string, string>;
  readonly httpStatus: number;
  /** Every JSON-RPC message of the answer (the response last; an SSE answer may carry notifications first). */
  readonly messages: JsonObject[];
  /** The JSON-RPC response to this request. */
  readonly response: JsonObject | undefined;
}

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** Headers the dispatcher derives from the message itself; a caller cannot override them. */
const RESERVED = new Set(['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name']);

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A host request coordinator for ext-tasks' `rawDispatch` (the V2 path the SDK client's codecs cannot carry:
 * `tools/call` answered with `resultType: "task"`, and `tasks/*`). ext-tasks hands it `{method, params}` already
 * framed with the per-request `_meta` envelope; this coordinator owns the request ids (its own `ext-tasks-raw-N`
 * namespace), POSTs each request on its own to the stateless 2026-07-28 endpoint with the SEP-2243 standard headers
 * (`Mcp-Protocol-Version` from the envelope, `Mcp-Method`, `Mcp-Name` from the `Mcp-Name` context header ext-tasks sets
 * for `tasks/*` or from `params.name`), matches the response by id, and records every exchange for wire assertions.
 */
export function fetchRawDispatch(url: string): { dispatch: RawClientDispatch; exchanges: RawExchange[] } {
  const exchanges: RawExchange[] = [];
  let nextId = 1;

  const dispatch: RawClientDispatch = async (request, options = {}): Promise<JsonRpcResponse> => {
    if (!isObject(request) || typeof request['method'] !== 'string') throw new DispatchError('not a JSON-RPC request');
    const method = request['method'];
    const params = isObject(request['params']) ? request['params'] : undefined;
    const meta = params && isObject(params['_meta']) ? params['_meta'] : {};
    const version = meta[PROTOCOL_VERSION_META];
    if (typeof version !== 'string') throw new DispatchError(`${method} carries no protocol-version envelope`);

    const contextHeaders = Object.entries(options.context?.headers ?? {});
    const nameHeader = contextHeaders.find(([name]) => name.toLowerCase() === 'mcp-name')?.[1];
    const mcpName = nameHeader ?? (typeof params?.['name'] === 'string' ? params['name'] : undefined);
    const headers: Record<string, string> = {
      ...Object.fromEntries(contextHeaders.filter(([name]) => !RESERVED.has(name.toLowerCase()))),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': method,
      ...(mcpName !== undefined && { 'mcp-name': mcpName }),
    };
    const id = `ext-tasks-raw-${nextId++}`;
    const body = { ...request, jsonrpc: '2.0', id, method } as RawExchange['request'];
    const timeout = options.context?.requestTimeoutMs;
    const signals = [options.signal, timeout === undefined ? undefined : AbortSignal.timeout(timeout)].filter(
      (signal): signal is AbortSignal => signal !== undefined,
    );

    let httpStatus: number;
    let messages: JsonObject[];
    try {
      const answer = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        ...(signals.length > 0 && { signal: AbortSignal.any(signals) }),
      });
      httpStatus = answer.status;
      messages = parseMessages(answer.headers.get('content-type') ?? '', await answer.text());
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new DispatchError(`${method}: the request did not complete`, false, { cause: error });
    }
    const response = messages.find((message) => message['id'] === id);
    exchanges.push({ request: body, headers, httpStatus, messages, response });
    if (response === undefined) throw new DispatchError(`${method}: HTTP ${httpStatus} without a JSON-RPC response`);
    const error = response['error'];
    if (isObject(error) && typeof error['code'] === 'number' && typeof error['message'] === 'string') {
      return {
        kind: 'error',
        error: {
          code: error['code'],
          message: error['message'],
          ...(error['data'] !== undefined && { data: error['data'] }),
        },
      };
    }
    if (!('result' in response)) throw new DispatchError(`${method}: a response with neither result nor error`);
    return { kind: 'result', result: response['result'] as JsonValue };
  };

  return { dispatch, exchanges };
}

/** The JSON-RPC messages of an HTTP answer: one JSON body (or batch), or the `data:` events of an SSE stream. */
function parseMessages(contentType: string, text: string): JsonObject[] {
  if (contentType.includes('text/event-stream')) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n'),
      )
      .filter((data) => data.length > 0)
      .map((data) => JSON.parse(data) as JsonObject);
  }
  if (text.trim() === '') return [];
  const parsed = JSON.parse(text) as JsonObject | JsonObject[];
  return Array.isArray(parsed) ? parsed : [parsed];
}
