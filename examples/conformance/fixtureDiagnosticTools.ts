import { inputRequired } from '@modelcontextprotocol/server';

import { object, text, type FixtureTool } from './FixtureTool.js';

/** Tools the `server-stateless` scenario (SEP-2575) probes by name; without them its checks count as untestable. */
export const FIXTURE_DIAGNOSTIC_TOOLS: Record<string, FixtureTool> = {
  // Called without the sampling capability declared: the SDK must refuse it with -32021 (HTTP 400).
  test_missing_capability: {
    description: 'Needs the sampling capability: asks the client LLM a question.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      if (ctx.mcpReq.inputResponses?.['pong'] !== undefined) return text('sampling answered');
      return inputRequired({
        inputRequests: {
          pong: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Answer with one word: pong' } }],
            maxTokens: 8,
          }),
        },
      });
    },
  },
  // The scenario reads the whole response stream and checks it carries no request of the server's own.
  test_streaming_elicitation: {
    description: 'Answers on the response stream without sending the client any request.',
    inputSchema: object({}),
    run: async () => text('response stream: results only'),
  },
  // Logs through the request's channel, which delivers nothing unless the request set _meta.logLevel.
  test_logging_tool: {
    description: 'Logs one message at info level.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged');
    },
  },
};
