import { ProtocolError, Server } from '@modelcontextprotocol/server';

import { TaskRpcError } from '../client/index.js';
import type { ServerFactory, ServerFactoryContext } from '../server/index.js';
import { forwardToolCall } from './forwardToolCall.js';
import { PASSTHROUGH } from './passthrough.js';
import type { ToolPolicies } from './toolPolicies.js';
import type { InputAnswer, InputRequest, Upstream } from './Upstream.js';
import { ErrorCodes } from '../protocol/index.js';

/** Methods forwarded as they are, by the capability that enables them. */
const FORWARDED: Record<string, string[]> = {
  resources: ['resources/list', 'resources/templates/list', 'resources/read'],
  prompts: ['prompts/list', 'prompts/get'],
  completions: ['completion/complete'],
  logging: ['logging/setLevel'],
};

/** Notifications from the upstream that every downstream connection gets. */
const BROADCAST = new Set([
  'notifications/tools/list_changed',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/updated',
  'notifications/message',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The capabilities the gateway serves: the upstream's, without its own tasks (the gateway serves those). */
function servedCapabilities(upstream: Record<string, unknown>): Record<string, unknown> {
  const served: Record<string, unknown> = { tools: { listChanged: true } };
  for (const key of ['resources', 'prompts', 'completions', 'logging'])
    if (key in upstream) served[key] = upstream[key];
  return served;
}

/**
 * The gateway's face: a low-level SDK server whose handlers forward to the upstream. The tasks runtime wraps it like
 * any author's server, so task-augmented calls become durable tasks (whose work forwards the call too, see
 * createProxyWork) and everything else passes straight through.
 */
export function createProxyServerFactory(
  upstream: Upstream,
  policies: ToolPolicies,
  info: { name: string; version: string },
): ServerFactory {
  return (context: ServerFactoryContext) => {
    const server = new Server(info, { capabilities: servedCapabilities(upstream.capabilities) as never });
    const forward = async (method: string, params: Record<string, unknown> | undefined, signal: AbortSignal) => {
      try {
        return await upstream.request(method, params, { signal });
      } catch (error) {
        if (error instanceof TaskRpcError) throw new ProtocolError(error.code, error.error.message, error.data);
        throw error;
      }
    };

    server.setRequestHandler('tools/list', async (request, ctx) => {
      const result = await forward('tools/list', request.params, ctx.mcpReq.signal);
      // The upstream's own task support is not the gateway's: the runtime declares the gateway's per policy.
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
      const outcome = await forwardToolCall(
        upstream,
        { name, ...(args !== undefined && { arguments: args }) },
        {
          signal: ctx.mcpReq.signal,
          settings: policies.settingsFor(name),
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
      );
      if (outcome.kind === 'error')
        throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
      return outcome.result as never;
    });

    for (const [capability, methods] of Object.entries(FORWARDED)) {
      if (!(capability in upstream.capabilities)) continue;
      for (const method of methods) {
        server.setRequestHandler(
          method as 'resources/list',
          (request, ctx) =>
            forward(method, request.params as Record<string, unknown> | undefined, ctx.mcpReq.signal) as never,
        );
      }
    }
    const resources = upstream.capabilities['resources'];
    if (isObject(resources) && resources['subscribe'] === true) {
      for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const) {
        server.setRequestHandler(
          method,
          (request, ctx) => forward(method, request.params as Record<string, unknown>, ctx.mcpReq.signal) as never,
        );
      }
    }

    if (context.era === 'legacy') {
      let stop: (() => void) | undefined;
      server.oninitialized = () => {
        stop ??= upstream.onNotification((notification) => {
          if (!BROADCAST.has(notification.method)) return;
          void server.notification(notification as never).catch(() => {});
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
