import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type TextMapGetter,
} from '@opentelemetry/api';

import type { DialectAnswer } from '../../dialects/index.js';
import { isObject, type JsonRpcRequest } from '../../rpc/index.js';
import type { MessageExtraLike } from '../ServerLike.js';

type Carrier = Record<string, unknown>;

/** Reads W3C headers from `_meta`, from a fetch Request's Headers, or from a Node header object. */
const getter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    if (typeof value === 'string') return value;
    return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
  },
};

function headersOf(extra: MessageExtraLike | undefined): Carrier | undefined {
  const request = extra?.['request'];
  if (request instanceof Request) {
    const traceparent = request.headers.get('traceparent');
    const tracestate = request.headers.get('tracestate');
    return { ...(traceparent !== null && { traceparent }), ...(tracestate !== null && { tracestate }) };
  }
  const info = extra?.['requestInfo'];
  return isObject(info) && isObject(info['headers']) ? info['headers'] : undefined;
}

/** The caller's trace: `params._meta` (MCP's convention) first, then the HTTP headers. */
function parentOf(request: JsonRpcRequest, extra: MessageExtraLike | undefined): Context {
  const meta = isObject(request.params?.['_meta']) ? request.params['_meta'] : undefined;
  if (typeof meta?.['traceparent'] === 'string') return propagation.extract(ROOT_CONTEXT, meta, getter);
  const headers = headersOf(extra);
  return headers ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
}

/**
 * A server span for one request a dialect answers, named and attributed after the OpenTelemetry semantic conventions
 * for MCP; the answer runs inside it, so a task it creates is traced as its child. A no-op without an SDK.
 */
export async function traceRequest(
  request: JsonRpcRequest,
  extra: MessageExtraLike | undefined,
  sessionId: string | undefined,
  answer: () => Promise<DialectAnswer>,
): Promise<DialectAnswer> {
  const tool = request.method === 'tools/call' ? request.params?.['name'] : undefined;
  const target = typeof tool === 'string' ? tool : undefined;
  const span = trace.getTracer('mcp-tasks').startSpan(
    target === undefined ? request.method : `${request.method} ${target}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': request.method,
        'jsonrpc.request.id': String(request.id),
        ...(target !== undefined && { 'gen_ai.tool.name': target }),
        ...(sessionId !== undefined && { 'mcp.session.id': sessionId }),
      },
    },
    parentOf(request, extra),
  );
  // Nothing records it and there is no caller's trace to carry on (no OpenTelemetry SDK): the answer runs as it is.
  if (!span.isRecording() && !isSpanContextValid(span.spanContext())) return answer();
  try {
    const answered = await context.with(trace.setSpan(context.active(), span), answer);
    if ('error' in answered && answered.error) {
      span.setAttribute('rpc.jsonrpc.error_code', answered.error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: answered.error.message });
    }
    return answered;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}
