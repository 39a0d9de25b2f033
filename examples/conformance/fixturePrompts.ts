import {
  acceptedContent,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type GetPromptResult,
  type InputRequiredResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { FIXTURE_PNG_BASE64 } from './fixtureMedia.js';
import { object } from './FixtureTool.js';

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  /** What completion/complete offers for this argument. */
  suggestions: string[];
}

interface FixturePrompt {
  description: string;
  arguments: PromptArgument[];
  get(args: Record<string, string>, ctx: ServerContext): GetPromptResult | InputRequiredResult;
}

const user = (content: GetPromptResult['messages'][number]['content']) => ({ role: 'user' as const, content });

/** The prompts the `prompts-*` scenarios get, by name. */
export const FIXTURE_PROMPTS: Record<string, FixturePrompt> = {
  test_simple_prompt: {
    description: 'A prompt without arguments.',
    arguments: [],
    get: () => ({ messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] }),
  },
  test_prompt_with_arguments: {
    description: 'A prompt that quotes its two arguments.',
    arguments: [
      { name: 'arg1', description: 'First argument', required: true, suggestions: ['hello', 'test', 'testValue1'] },
      { name: 'arg2', description: 'Second argument', required: true, suggestions: ['world', 'testValue2'] },
    ],
    get: (args) => ({
      messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${args['arg1']}', arg2='${args['arg2']}'` })],
    }),
  },
  test_prompt_with_embedded_resource: {
    description: 'A prompt that embeds the resource it is given.',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true, suggestions: [] }],
    get: (args) => ({
      messages: [
        user({
          type: 'resource',
          resource: {
            uri: args['resourceUri'] as string,
            mimeType: 'text/plain',
            text: 'Embedded resource content for testing.',
          },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  },
  test_prompt_with_image: {
    description: 'A prompt that shows an image.',
    arguments: [],
    get: () => ({
      messages: [
        user({ type: 'image', data: FIXTURE_PNG_BASE64, mimeType: 'image/png' }),
        user({ type: 'text', text: 'Please analyze the image above.' }),
      ],
    }),
  },
  // SEP-2322: prompts/get may ask for input too (2026-07-28; the legacy shim asks directly on a 2025 session).
  test_input_required_result_prompt: {
    description: 'A prompt that asks which context to use before it renders.',
    arguments: [],
    get: (_args, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_context', z.object({ context: z.string() }));
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: object({ context: { type: 'string' } }, ['context']) as never,
            }),
          },
        });
      }
      return { messages: [user({ type: 'text', text: `Use this context: ${answer.context}` })] };
    },
  },
};

/** Adds the fixture prompts to a low-level server. */
export function registerFixturePrompts(server: Server): void {
  server.registerCapabilities({ prompts: {} });
  server.setRequestHandler('prompts/list', () => ({
    prompts: Object.entries(FIXTURE_PROMPTS).map(([name, prompt]) => ({
      name,
      description: prompt.description,
      arguments: prompt.arguments.map(({ name, description, required }) => ({ name, description, required })),
    })),
  }));
  server.setRequestHandler('prompts/get', (request, ctx) => {
    const prompt = FIXTURE_PROMPTS[request.params.name];
    if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    const missing = prompt.arguments.filter((argument) => argument.required && args[argument.name] === undefined);
    if (missing.length > 0) {
      const names = missing.map((argument) => argument.name).join(', ');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Missing required arguments: ${names}`);
    }
    return prompt.get(args, ctx);
  });
}
