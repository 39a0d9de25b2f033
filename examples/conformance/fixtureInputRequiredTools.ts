import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  type ClientCapabilities,
  type InputRequests,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { fixtureRequestState } from './fixtureRequestState.js';
import { object, text, type FixtureTool } from './FixtureTool.js';

// Multi-round-trip tools (SEP-2322): each returns `input_required` until the retried call carries what it needs. They
// are written once for both wires; on a 2025 session the SDK's legacy shim asks the client directly.

const askName = (message = 'What is your name?') =>
  inputRequired.elicit({ message, requestedSchema: object({ name: { type: 'string' } }, ['name']) as never });
const askConfirm = () =>
  inputRequired.elicit({
    message: 'Please confirm',
    requestedSchema: object({ ok: { type: 'boolean' } }, ['ok']) as never,
  });
const askGreeting = () =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
    maxTokens: 50,
  });

const Name = z.object({ name: z.string() });
const Color = z.object({ color: z.string() });
const Confirmation = z.object({ ok: z.boolean() });

interface Answers {
  name: string;
  greeting: string;
  roots: string[];
}

/** Text of a sampling answer, if `key` holds one. */
function sampledText(ctx: ServerContext, key: string): string | undefined {
  const answer = inputResponse(ctx.mcpReq.inputResponses, key);
  if (answer.kind !== 'sampling') return undefined;
  const content = answer.result.content;
  const block = Array.isArray(content) ? content[0] : content;
  return block?.type === 'text' ? block.text : JSON.stringify(block);
}

/** URIs of a roots answer, if `key` holds one. */
function rootUris(ctx: ServerContext, key: string): string[] | undefined {
  const answer = inputResponse(ctx.mcpReq.inputResponses, key);
  return answer.kind === 'roots' ? answer.roots.map((root) => root.uri) : undefined;
}

/** The verified state the client echoed, when this tool minted it (the server's verify hook already checked the MAC). */
function stateOf(ctx: ServerContext, tool: string): Record<string, unknown> | undefined {
  const state = ctx.mcpReq.requestState<Record<string, unknown>>();
  return typeof state === 'object' && state !== null && state['tool'] === tool ? state : undefined;
}

export const FIXTURE_INPUT_REQUIRED_TOOLS: Record<string, FixtureTool> = {
  test_input_required_result_elicitation: {
    description: 'Asks for your name, then greets you.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      // Anything but an accepted, well-formed answer (missing, wrong key, malformed) is asked again.
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', Name);
      return answer ? text(`Hello, ${answer.name}!`) : inputRequired({ inputRequests: { user_name: askName() } });
    },
  },
  test_input_required_result_sampling: {
    description: 'Asks the client LLM for the capital of France.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      const answer = sampledText(ctx, 'capital_question');
      if (answer !== undefined) return text(`The model says: ${answer}`);
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
            maxTokens: 100,
          }),
        },
      });
    },
  },
  test_input_required_result_list_roots: {
    description: "Lists the client's roots.",
    inputSchema: object({}),
    run: async (_args, ctx) => {
      const uris = rootUris(ctx, 'client_roots');
      if (uris !== undefined) return text(`Roots (${uris.length}): ${uris.join(', ')}`);
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    },
  },
  test_input_required_result_request_state: {
    description: 'Asks for a confirmation and carries sealed state across the round trip.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      if (stateOf(ctx, 'request_state') && acceptedContent(ctx.mcpReq.inputResponses, 'confirm', Confirmation)) {
        return text('state-ok: the echoed requestState verified and the confirmation arrived');
      }
      return inputRequired({
        inputRequests: { confirm: askConfirm() },
        requestState: await fixtureRequestState.mint({ tool: 'request_state' }),
      });
    },
  },
  test_input_required_result_multiple_inputs: {
    description: 'Asks for a name, an LLM greeting and the roots at once.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      // Answers collected in earlier rounds travel in the sealed state: inputResponses holds only the latest round.
      const known = (stateOf(ctx, 'multiple_inputs')?.['answers'] ?? {}) as Partial<Answers>;
      const answers: Partial<Answers> = {
        name: acceptedContent(ctx.mcpReq.inputResponses, 'user_name', Name)?.name ?? known.name,
        greeting: sampledText(ctx, 'greeting') ?? known.greeting,
        roots: rootUris(ctx, 'client_roots') ?? known.roots,
      };
      const { name, greeting, roots } = answers;
      if (name !== undefined && greeting !== undefined && roots !== undefined) {
        return text(`${greeting} ${name} (${roots.length} roots)`);
      }
      return inputRequired({
        inputRequests: {
          ...(name === undefined && { user_name: askName() }),
          ...(greeting === undefined && { greeting: askGreeting() }),
          ...(roots === undefined && { client_roots: inputRequired.listRoots() }),
        },
        requestState: await fixtureRequestState.mint({ tool: 'multiple_inputs', answers }),
      });
    },
  },
  test_input_required_result_multi_round: {
    description: 'Asks for your name, then your favourite colour, one round each.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      // The name learnt in round one travels in the state; round one already carries state, as the scenario expects.
      const state = stateOf(ctx, 'multi_round');
      const name = typeof state?.['name'] === 'string' ? state['name'] : undefined;
      if (name === undefined) {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'step1', Name);
        if (answer === undefined) {
          return inputRequired({
            inputRequests: { step1: askName('Step 1: What is your name?') },
            requestState: await fixtureRequestState.mint({ tool: 'multi_round' }),
          });
        }
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: object({ color: { type: 'string' } }, ['color']) as never,
            }),
          },
          requestState: await fixtureRequestState.mint({ tool: 'multi_round', name: answer.name }),
        });
      }
      const color = acceptedContent(ctx.mcpReq.inputResponses, 'step2', Color)?.color ?? 'no colour';
      return text(`${name} likes ${color}`);
    },
  },
  test_input_required_result_tampered_state: {
    description: 'Asks for a confirmation with sealed state; a tampered echo is refused before the tool runs.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      if (stateOf(ctx, 'tampered_state') && acceptedContent(ctx.mcpReq.inputResponses, 'confirm', Confirmation)) {
        return text('integrity-ok: the echoed requestState verified');
      }
      return inputRequired({
        inputRequests: { confirm: askConfirm() },
        requestState: await fixtureRequestState.mint({ tool: 'tampered_state' }),
      });
    },
  },
  test_input_required_result_capabilities: {
    description: 'Asks only for the kinds of input the client declared it can give.',
    inputSchema: object({}),
    run: async (_args, ctx) => {
      if (ctx.mcpReq.inputResponses !== undefined) return text('Every declared kind of input answered');
      // 2026-07-28 requests declare their capabilities per request; a 2025 session's shim checks its own.
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const declared = (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? {
        elicitation: {},
      };
      const inputRequests: InputRequests = {
        ...(declared.elicitation !== undefined && { user_name: askName() }),
        ...(declared.sampling !== undefined && { greeting: askGreeting() }),
        ...(declared.roots !== undefined && { client_roots: inputRequired.listRoots() }),
      };
      if (Object.keys(inputRequests).length === 0) return text('The client declared no kind of input');
      return inputRequired({ inputRequests });
    },
  },
};
