import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';

import { EphemeralStep } from './EphemeralStep.js';
import { JournaledStep } from './JournaledStep.js';
import type { Step } from './Step.js';
import { WorkflowRun, WorkflowSuspended } from './WorkflowRun.js';

/** A workflow handler: the tool's arguments and the step API; returns the tool result. */
export type WorkflowHandler<Args> = (args: Args, step: Step, ctx: ServerContext) => Promise<CallToolResult>;

export interface WorkflowOptions {
  /**
   * The whole task must finish within this long of its creation (across restarts, sleeps and questions): once it
   * passes, the running closure is aborted, no further step starts and the task ends with a `TaskTimeoutError`.
   */
  timeoutMs?: number;
}

/** What a suspended run answers its internal call with; the task runtime parks the task instead of using it. */
const SUSPENDED_RESULT: CallToolResult = { content: [{ type: 'text', text: 'suspended' }] };

/**
 * Turns a workflow handler into an ordinary SDK tool callback (`server.registerTool(name, config, withSteps(...))`).
 * Run as a task, its steps are journaled in the store and it resumes from the last completed one; called plainly, it
 * runs the same steps within the request. A throw ends the call with an `isError` result naming the error.
 */
export function withSteps<Args>(
  handler: WorkflowHandler<Args>,
  options: WorkflowOptions = {},
): (args: Args, ctx: ServerContext) => Promise<CallToolResult> {
  return async (args, ctx) => {
    const run = WorkflowRun.current();
    const step = run
      ? new JournaledStep(run, options.timeoutMs)
      : new EphemeralStep(ctx.mcpReq.signal, (params, timeout) =>
          ctx.mcpReq.elicitInput(params as never, timeout === undefined ? undefined : { timeout }),
        );
    try {
      return await handler(args, step, ctx);
    } catch (error) {
      if (run && (error instanceof WorkflowSuspended || run.stopped)) return SUSPENDED_RESULT;
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      return { content: [{ type: 'text', text: `${name}: ${message}` }], isError: true };
    }
  };
}

/** The part of the SDK's McpServer that `registerTask` uses. */
export interface ToolRegistrar {
  registerTool(name: string, config: never, callback: never): unknown;
}

/**
 * `registerTool` for workflow handlers, in the shape of `@modelcontextprotocol/tasks`' `registerTask`: the handler
 * receives the validated input and the step API. Declare the tool's task support to the runtime as usual.
 */
export function registerTask<Args>(
  server: ToolRegistrar,
  name: string,
  config: { title?: string; description?: string; inputSchema?: unknown; annotations?: unknown } & WorkflowOptions,
  handler: (input: Args, step: Step) => Promise<CallToolResult>,
): unknown {
  const { timeoutMs, ...toolConfig } = config;
  const callback = withSteps<Args>((input, step) => handler(input, step), timeoutMs === undefined ? {} : { timeoutMs });
  return server.registerTool(name, toolConfig as never, callback as never);
}
