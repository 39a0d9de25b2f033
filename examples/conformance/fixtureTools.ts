import {
  acceptedContent,
  inputRequired,
  ProtocolError,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import type { ToolTaskPolicy } from 'mcp-tasks';
import { sleep } from '../shared/sleep.js';
import { registerFixtureCompletion } from './fixtureCompletion.js';
import { FIXTURE_CONTENT_TOOLS } from './fixtureContentTools.js';
import { FIXTURE_DIAGNOSTIC_TOOLS } from './fixtureDiagnosticTools.js';
import { FIXTURE_EVENT_TOOLS } from './fixtureEventTools.js';
import { FIXTURE_INPUT_REQUIRED_TOOLS } from './fixtureInputRequiredTools.js';
import { registerFixturePrompts } from './fixturePrompts.js';
import { fixtureRequestState } from './fixtureRequestState.js';
import { registerFixtureResources } from './fixtureResources.js';
import { FIXTURE_SCHEMA_TOOLS } from './fixtureSchemaTools.js';
import { FIXTURE_WORKFLOW_TOOLS } from './fixtureWorkflowTools.js';
import { object, text, type FixtureTool } from './FixtureTool.js';

/** The longest `slow_compute` run. */
const MAX_SLOW_SECONDS = 3600;

/** Human-paced input: far beyond the SDK's 60 s default request timeout. */
const HUMAN_TIMEOUT = { timeout: 24 * 60 * 60 * 1000 };

/** Sends progress for the request's token, if it carried one. */
async function progress(ctx: ServerContext, value: number, total: number, message?: string): Promise<void> {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return;
  await ctx.mcpReq.notify({
    method: 'notifications/progress',
    params: { progressToken: token, progress: value, total, ...(message && { message }) },
  });
}

/**
 * The fixture tools: the names and arguments the official conformance suites call (CONFORMANCE.md §4.1, the `test_*`
 * tools of the 0.1.x scenarios and those of the 2025-11-25 and 2026-07-28 core scenarios), each with its task policy.
 */
export const FIXTURE_TOOLS: Record<string, FixtureTool> = {
  greet: {
    description: 'Greets someone (synchronous only).',
    inputSchema: object({ name: { type: 'string' } }, ['name']),
    run: async (args) => text(`Hello, ${String(args['name'])}!`),
  },
  slow_compute: {
    description: 'Sleeps for `seconds`, reporting progress, then returns a result.',
    inputSchema: object(
      { seconds: { type: 'number', minimum: 0, maximum: MAX_SLOW_SECONDS }, label: { type: 'string' } },
      ['seconds'],
    ),
    policy: { taskSupport: 'optional', pollIntervalMs: 200, retrySafe: true },
    run: async (args, ctx) => {
      const seconds = Number(args['seconds'] ?? 0);
      // A huge or non-finite value would otherwise loop for ever.
      if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_SLOW_SECONDS)
        throw new ProtocolError(-32602, `slow_compute: seconds must be a number from 0 to ${MAX_SLOW_SECONDS}`);
      const steps = Math.max(1, Math.ceil(seconds * 4));
      for (let step = 0; step < steps; step++) {
        await progress(ctx, step, steps, `computing ${String(args['label'] ?? '')} (${step}/${steps})`);
        await sleep((seconds * 1000) / steps, ctx.mcpReq.signal);
      }
      await progress(ctx, steps, steps, 'done');
      return text(`Computed ${String(args['label'] ?? 'result')} in ${seconds}s`);
    },
  },
  failing_job: {
    description: 'Works for about a second, then reports a tool error (isError).',
    inputSchema: object({}),
    policy: { taskSupport: 'required', pollIntervalMs: 200 },
    run: async (_args, ctx) => {
      await sleep(1000, ctx.mcpReq.signal);
      return { content: [{ type: 'text', text: 'The job failed: the input data is corrupt.' }], isError: true };
    },
  },
  protocol_error_job: {
    description: 'Fails with a JSON-RPC error.',
    inputSchema: object({}),
    policy: { taskSupport: 'optional', pollIntervalMs: 200 },
    run: async (_args, ctx) => {
      await sleep(200, ctx.mcpReq.signal);
      throw new ProtocolError(-32603, 'protocol_error_job: the upstream service refused the request', {
        upstream: 'inventory',
        retryable: false,
      });
    },
  },
  confirm_delete: {
    description: 'Asks for confirmation (one elicitation) before "deleting" a file.',
    inputSchema: object({ filename: { type: 'string' } }, ['filename']),
    policy: { taskSupport: 'optional', pollIntervalMs: 200 },
    run: async (args, ctx) => {
      const answer = await ctx.mcpReq.elicitInput(
        {
          message: `Delete ${String(args['filename'])}?`,
          requestedSchema: object({ confirm: { type: 'boolean' } }, ['confirm']),
        } as never,
        HUMAN_TIMEOUT,
      );
      const confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
      return text(
        confirmed ? `Deleted ${String(args['filename'])}` : `Kept ${String(args['filename'])} (${answer.action})`,
      );
    },
  },
  multi_input: {
    description: 'Asks two questions at once (two elicitations in parallel).',
    inputSchema: object({}),
    policy: { taskSupport: 'optional', pollIntervalMs: 200 },
    run: async (_args, ctx) => {
      // Both forms accept the same fields, so either answer fits either question.
      const form = object({ name: { type: 'string' }, confirm: { type: 'boolean' } });
      const [first, second] = await Promise.all([
        ctx.mcpReq.elicitInput({ message: 'Your name?', requestedSchema: form } as never, HUMAN_TIMEOUT),
        ctx.mcpReq.elicitInput({ message: 'Proceed with the import?', requestedSchema: form } as never, HUMAN_TIMEOUT),
      ]);
      return text(
        `name=${JSON.stringify(first.content?.['name'] ?? null)} confirm=${JSON.stringify(second.content?.['confirm'] ?? null)}`,
      );
    },
  },
  rename_file: {
    description: 'Asks for a new name, then for confirmation (two elicitations, one after the other).',
    inputSchema: object({ filename: { type: 'string' } }, ['filename']),
    policy: { taskSupport: 'optional', pollIntervalMs: 200 },
    run: async (args, ctx) => {
      const from = String(args['filename']);
      const named = await ctx.mcpReq.elicitInput(
        { message: `New name for ${from}?`, requestedSchema: object({ name: { type: 'string' } }, ['name']) } as never,
        HUMAN_TIMEOUT,
      );
      if (named.action !== 'accept') return text(`Kept ${from} (${named.action})`);
      const to = String(named.content?.['name']);
      const confirmed = await ctx.mcpReq.elicitInput(
        {
          message: `Rename ${from} to ${to}?`,
          requestedSchema: object({ confirm: { type: 'boolean' } }, ['confirm']),
        } as never,
        HUMAN_TIMEOUT,
      );
      return text(
        confirmed.action === 'accept' && confirmed.content?.['confirm'] === true
          ? `Renamed ${from} to ${to}`
          : `Kept ${from} (${confirmed.action})`,
      );
    },
  },
  test_tool_with_task: {
    description: 'Asks for a user name (multi-round-trip input), then works on it as a task.',
    inputSchema: object({}),
    policy: { taskSupport: 'required', pollIntervalMs: 200, inputStyle: 'multiRoundTrip' },
    run: async (_args, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', z.object({ name: z.string() }));
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            user_name: inputRequired.elicit({
              message: 'What is your name?',
              requestedSchema: object({ name: { type: 'string' } }, ['name']) as never,
            }),
          },
        });
      }
      await sleep(1500, ctx.mcpReq.signal);
      return text(`Hello ${answer.name}, your task is complete.`);
    },
  },
  staged_deploy: {
    description: 'Builds (a while), then asks for approval (multi-round-trip) and deploys; the build is not redone.',
    inputSchema: object({ service: { type: 'string' } }, ['service']),
    policy: { taskSupport: 'optional', pollIntervalMs: 200, inputStyle: 'multiRoundTrip', retrySafe: true },
    run: async (args, ctx) => {
      const service = String(args['service']);
      // The request state says what earlier rounds did, so nothing has to stay in memory between them.
      const state = ctx.mcpReq.requestState<{ tool?: string; build?: string }>();
      const approval = acceptedContent(ctx.mcpReq.inputResponses, 'approve', z.object({ approve: z.boolean() }));
      if (state?.tool !== 'staged_deploy' || approval === undefined) {
        const build = state?.build ?? `build-${service}-${process.pid}`;
        if (state?.build === undefined) await sleep(600, ctx.mcpReq.signal);
        return inputRequired({
          inputRequests: {
            approve: inputRequired.elicit({
              message: `Deploy ${build}?`,
              requestedSchema: object({ approve: { type: 'boolean' } }, ['approve']) as never,
            }),
          },
          requestState: await fixtureRequestState.mint({ tool: 'staged_deploy', build }),
        });
      }
      return text(
        approval.approve
          ? `Deployed ${state.build} (deployer pid ${process.pid})`
          : `Deployment of ${state.build} declined`,
      );
    },
  },
  generate_report: {
    description: 'Builds a report page by page (task only).',
    inputSchema: object({ pages: { type: 'number', minimum: 1 } }),
    policy: { taskSupport: 'required', pollIntervalMs: 100, retrySafe: true },
    run: async (args, ctx) => {
      const pages = Math.max(1, Math.min(50, Number(args['pages'] ?? 3)));
      for (let page = 1; page <= pages; page++) {
        await sleep(100, ctx.mcpReq.signal);
        await progress(ctx, page, pages, `page ${page} of ${pages}`);
      }
      return text(`Report ready: ${pages} pages`);
    },
  },
  test_simple_text: {
    description: 'Returns simple text.',
    inputSchema: object({}),
    run: async () => text('This is a simple text response for testing.'),
  },
  test_error_handling: {
    description: 'Always returns a tool error.',
    inputSchema: object({}),
    run: async () => ({
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
      isError: true,
    }),
  },
  test_tool_with_progress: {
    description: 'Reports progress 0, 50, 100.',
    inputSchema: object({}),
    policy: { taskSupport: 'optional', pollIntervalMs: 100 },
    run: async (_args, ctx) => {
      for (const value of [0, 50, 100]) {
        await progress(ctx, value, 100);
        if (value < 100) await sleep(50, ctx.mcpReq.signal);
      }
      return text('Progress test completed');
    },
  },
  test_tool_with_logging: {
    description: 'Sends three log messages.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'Tool execution started');
      await sleep(50);
      await ctx.mcpReq.log('info', 'Tool processing data');
      await sleep(50);
      await ctx.mcpReq.log('info', 'Tool execution completed');
      return text('Logging test completed');
    },
  },
  test_sampling: {
    description: 'Asks the client for an LLM completion.',
    inputSchema: object({ prompt: { type: 'string' } }, ['prompt']),
    policy: { taskSupport: 'optional', pollIntervalMs: 100 },
    run: async (args, ctx) => {
      const result = await ctx.mcpReq.requestSampling(
        { messages: [{ role: 'user', content: { type: 'text', text: String(args['prompt']) } }], maxTokens: 100 },
        HUMAN_TIMEOUT,
      );
      const content = result.content as { type: string; text?: string };
      return text(`LLM response: ${content.type === 'text' ? content.text : JSON.stringify(content)}`);
    },
  },
  test_elicitation: {
    description: 'Asks the user for a username and email.',
    inputSchema: object({ message: { type: 'string' } }, ['message']),
    policy: { taskSupport: 'optional', pollIntervalMs: 100 },
    run: async (args, ctx) => {
      const result = await ctx.mcpReq.elicitInput(
        {
          message: String(args['message']),
          requestedSchema: object(
            {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            ['username', 'email'],
          ),
        } as never,
        HUMAN_TIMEOUT,
      );
      return text(`User response: <action: ${result.action}, content: ${JSON.stringify(result.content ?? {})}>`);
    },
  },
  ...FIXTURE_CONTENT_TOOLS,
  ...FIXTURE_SCHEMA_TOOLS,
  ...FIXTURE_INPUT_REQUIRED_TOOLS,
  ...FIXTURE_DIAGNOSTIC_TOOLS,
  ...FIXTURE_WORKFLOW_TOOLS,
  ...FIXTURE_EVENT_TOOLS,
};

/** Task policies of the fixture tools, for the tasks runtime. */
export const FIXTURE_POLICIES: Record<string, ToolTaskPolicy> = Object.fromEntries(
  Object.entries(FIXTURE_TOOLS).flatMap(([name, tool]) => (tool.policy ? [[name, tool.policy]] : [])),
);

/**
 * A fresh fixture server on the SDK's low-level Server, so a tool can fail with a real JSON-RPC error; resources,
 * prompts and completion sit on the same instance.
 */
export function createFixtureServer(): Server {
  const server = new Server(
    { name: 'mcp-tasks-fixture', version: '1.0.0' },
    // Refuses a tampered or expired requestState with -32602 before any handler sees it.
    { capabilities: { tools: {}, logging: {} }, requestState: { verify: fixtureRequestState.verify } },
  );
  server.setRequestHandler('tools/list', () => ({
    tools: Object.entries(FIXTURE_TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: tool.inputSchema as never,
    })),
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = FIXTURE_TOOLS[request.params.name];
    if (!tool) throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
    return (await tool.run(request.params.arguments ?? {}, ctx)) as never;
  });
  registerFixtureResources(server);
  registerFixturePrompts(server);
  registerFixtureCompletion(server);
  return server;
}
