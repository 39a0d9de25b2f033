import { ProtocolError, Server } from '@modelcontextprotocol/server';

import { TaskRpcError } from '../client/index.js';
import type { AuthInfoLike, ServerFactory, ServerFactoryContext } from '../server/index.js';
import { CallAdmission, CallRefusedError } from './CallAdmission.js';
import { callerKeyOf } from './callerKey.js';
import { forwardToolCall } from './forwardToolCall.js';
import type { InputAnswer, InputRequest } from './InputRoute.js';
import { PASSTHROUGH } from './passthrough.js';
import type { ToolPolicies } from './toolPolicies.js';
import type { UpstreamLease, UpstreamPool } from './UpstreamPool.js';
import { ErrorCodes, isObject } from '../protocol/index.js';

/** Methods forwarded as they are, by the capability that enables them. */
const FORWARDED: Record<string, string[]> = {
  resources: ['resources/list', 'resources/templates/list', 'resources/read'],
  prompts: ['prompts/list', 'prompts/get'],
  completions: ['completion/complete'],
  logging: ['logging/setLevel'],
};

/** Notifications from a caller's upstream connection that the caller's downstream connections get. */
const RELAYED = new Set([
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/updated',
  'notifications/message',
]);

/** The capabilities the proxy serves: the upstream's, without its own tasks (the proxy serves those). */
function servedCapabilities(upstream: Record<string, unknown>): Record<string, unknown> {
  const served: Record<string, unknown> = { tools: { listChanged: true } };
  for (const key of ['resources', 'prompts', 'completions', 'logging'])
    if (key in upstream) served[key] = upstream[key];
  return served;
}

type HandlerContext = { sessionId?: string; http?: { authInfo?: AuthInfoLike }; mcpReq: { signal: AbortSignal } };

/**
 * The proxy's face: a low-level SDK server whose handlers forward to the upstream, each caller over its own upstream
 * connection (UpstreamPool), so an upstream's questions, logs and resource updates reach only the caller whose
 * connection they came on. The tasks runtime wraps it like any author's server, so task-augmented calls become
 * durable tasks (whose work forwards the call too, see createProxyWork) and everything else passes straight through,
 * within the per-caller bounds of `admission`.
 */
export function createProxyServerFactory(
  upstreams: UpstreamPool,
  policies: ToolPolicies,
  info: { name: string; version: string },
  admission: CallAdmission = new CallAdmission(),
): ServerFactory {
  return (context: ServerFactoryContext) => {
    const server = new Server(info, { capabilities: servedCapabilities(upstreams.capabilities) as never });
    /** Runs `call` on the caller's connection, within the caller's share of upstream calls. */
    const onCallers = async <T>(ctx: HandlerContext, call: (lease: UpstreamLease) => Promise<T>): Promise<T> => {
      const key = callerKeyOf(ctx.http?.authInfo ?? context.authInfo, ctx.sessionId);
      let leave: () => void;
      try {
        leave = await admission.enter(key, ctx.mcpReq.signal);
      } catch (error) {
        if (error instanceof CallRefusedError)
          throw new ProtocolError(ErrorCodes.INVALID_REQUEST, error.message, { limit: error.limit, ...error.details });
        throw error;
      }
      try {
        const lease = await upstreams.acquire(key);
        try {
          return await call(lease);
        } finally {
          lease.release();
        }
      } finally {
        leave();
      }
    };
    const forward = (method: string, params: Record<string, unknown> | undefined, ctx: HandlerContext) =>
      onCallers(ctx, async ({ upstream }) => {
        try {
          return await upstream.request(method, params, { signal: ctx.mcpReq.signal });
        } catch (error) {
          if (error instanceof TaskRpcError) throw new ProtocolError(error.code, error.error.message, error.data);
          throw error;
        }
      });

    server.setRequestHandler('tools/list', async (request, ctx) => {
      const result = await forward('tools/list', request.params, ctx);
      // The upstream's own task support is not the proxy's: the runtime declares the proxy's per policy.
      const tools = Array.isArray(result['tools']) ? result['tools'] : [];
      return {
        ...result,
        tools: tools.map((tool: unknown) => {
          if (!isObject(tool) || !isObject(tool['execution'])) return tool;
          const { taskSupport: _upstream, ...execution } = tool['execution'];
          const { execution: _execution, ...rest } = tool;
          return Object.keys(execution).length > 0 ? { ...rest, execution } : rest;
        }),
      } as never;
    });

    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      const token = request.params._meta?.progressToken;
      const outcome = await onCallers(ctx, ({ upstream }) =>
        forwardToolCall(
          upstream,
          { name, ...(args !== undefined && { arguments: args }) },
          {
            signal: ctx.mcpReq.signal,
            settings: policies.settingsFor(name),
            gate: upstreams.gate,
            asTask: false,
            // The 2026-07-28 wire has no server-to-client requests outside a task.
            ...(context.era === 'legacy' && {
              requestInput: (input: InputRequest) => askDownstream(ctx.mcpReq.send, input),
            }),
            ...(token !== undefined && {
              onProgress: (progress) =>
                void ctx.mcpReq
                  .notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } })
                  .catch(() => {}),
            }),
          },
        ),
      );
      if (outcome.kind === 'error')
        throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
      return outcome.result as never;
    });

    for (const [capability, methods] of Object.entries(FORWARDED)) {
      if (!(capability in upstreams.capabilities)) continue;
      for (const method of methods) {
        server.setRequestHandler(
          method as 'resources/list',
          (request, ctx) => forward(method, request.params as Record<string, unknown> | undefined, ctx) as never,
        );
      }
    }
    const resources = upstreams.capabilities['resources'];
    if (isObject(resources) && resources['subscribe'] === true) {
      for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const) {
        server.setRequestHandler(
          method,
          (request, ctx) => forward(method, request.params as Record<string, unknown>, ctx) as never,
        );
      }
    }

    if (context.era === 'legacy') {
      // Only the caller's own connection's notifications are relayed to its session (not another caller's logs).
      let stop: (() => void) | undefined;
      server.oninitialized = () => {
        stop ??= upstreams.onNotification(callerKeyOf(context.authInfo, server.transport?.sessionId), (n) => {
          if (!RELAYED.has(n.method)) return;
          void server.notification(n as never).catch(() => {});
        });
      };
      server.onclose = () => stop?.();
    }
    return server;
  };
}

type Send = (
  request: { method: string; params?: Record<string, unknown> },
  schema: typeof PASSTHROUGH,
  options?: { timeout?: number },
) => Promise<Record<string, unknown>>;

/** An upstream question asked of the downstream client during a plain call; people may take their time. */
async function askDownstream(send: unknown, request: InputRequest): Promise<InputAnswer> {
  try {
    return { result: await (send as Send)(request, PASSTHROUGH, { timeout: 24 * 3600_000 }) };
  } catch (error) {
    if (error instanceof ProtocolError)
      return {
        error: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) },
      };
    return {
      error: { code: ErrorCodes.INTERNAL_ERROR, message: error instanceof Error ? error.message : String(error) },
    };
  }
}
