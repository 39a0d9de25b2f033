// Load from a real load generator (autocannon): N connections keep one JSON-RPC request (or a two-request task
// lifecycle) in flight each, over pre-opened MCP sessions, for a fixed time.
import autocannon from 'autocannon';

import { percentile } from './measure.js';

export interface LoadResult {
  /** Completed units per second: requests, or lifecycles for `lifecycle`. */
  perSecond: number;
  p50: number;
  p99: number;
  /** Non-200 answers and JSON-RPC errors. */
  errors: number;
}

export interface LoadOptions {
  url: string;
  /** `Mcp-Session-Id` values to spread requests over (none for a server without sessions). */
  sessions: string[];
  connections: number;
  seconds: number;
}

type Message = { id?: unknown; result?: Record<string, unknown>; error?: unknown };

/** The JSON-RPC answer in a JSON or SSE body. */
export function answerOf(body: string): Message | undefined {
  const text = body.trimStart();
  if (text.startsWith('{')) return JSON.parse(text) as Message;
  for (const line of text.split('\n')) {
    if (line.startsWith('data:') && line.slice(5).trim()) {
      const message = JSON.parse(line.slice(5)) as Message;
      if ('result' in message || 'error' in message) return message;
    }
  }
  return undefined;
}

function headers(session: string | undefined): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(session && { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
  };
}

interface Context {
  session?: number;
  started?: number;
  taskId?: string;
}

/** `params(session)` builds the request per session; one request per unit. */
export async function requestLoad(
  options: LoadOptions,
  method: string,
  params: (session: number) => Record<string, unknown> | undefined = () => undefined,
): Promise<LoadResult> {
  let next = 0;
  let errors = 0;
  const result = await run(options, [
    {
      method: 'POST',
      setupRequest: (request) => {
        const session = next++ % Math.max(1, options.sessions.length);
        const p = params(session);
        return {
          ...request,
          headers: headers(options.sessions[session]),
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(p && { params: p }) }),
        };
      },
      onResponse: (status, body) => {
        if (status !== 200 || !answerOf(body)?.result) errors++;
      },
    },
  ]);
  return {
    perSecond: result.requests.total / options.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
  };
}

/** One unit = a task-augmented `tools/call` of `tool` then `tasks/result` on the task it created. */
export async function lifecycleLoad(
  options: LoadOptions,
  tool: string,
  args: Record<string, unknown>,
): Promise<LoadResult> {
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  await run(options, [
    {
      method: 'POST',
      setupRequest: (request, context: Context) => {
        context.session = next++ % Math.max(1, options.sessions.length);
        context.started = performance.now();
        return {
          ...request,
          headers: headers(options.sessions[context.session]),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: tool, arguments: args, task: {} },
          }),
        };
      },
      onResponse: (status, body, context: Context) => {
        const task = answerOf(body)?.result?.['task'] as { taskId?: string } | undefined;
        if (status !== 200 || !task?.taskId) errors++;
        else context.taskId = task.taskId;
      },
    },
    {
      method: 'POST',
      setupRequest: (request, context: Context) => ({
        ...request,
        headers: headers(options.sessions[context.session ?? 0]),
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId: context.taskId } }),
      }),
      onResponse: (status, body, context: Context) => {
        if (status !== 200 || !answerOf(body)?.result) errors++;
        else latencies.push(performance.now() - (context.started ?? 0));
      },
    },
  ]);
  return {
    perSecond: latencies.length / options.seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}

function run(options: LoadOptions, requests: autocannon.Request[]): Promise<autocannon.Result> {
  return autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    requests,
  });
}
