import { inputRequired, inputResponse, type ServerContext } from '@modelcontextprotocol/server';

import { object, text, type FixtureTool, type FixtureToolResult } from './FixtureTool.js';

/**
 * Asks one form question, written once for both wires: a 2026-07-28 request gets an `input_required` result, and on a
 * 2025 session the SDK's legacy shim sends the same request as `elicitation/create` and calls the tool again with the
 * answer. Any answer (accept, decline, cancel) ends the tool.
 */
function elicitOnce(ctx: ServerContext, message: string, requestedSchema: Record<string, unknown>): FixtureToolResult {
  const answer = inputResponse(ctx.mcpReq.inputResponses, 'form');
  if (answer.kind !== 'elicit') {
    return inputRequired({ inputRequests: { form: inputRequired.elicit({ message, requestedSchema } as never) } });
  }
  return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
}

const titled = (pairs: Array<[string, string]>) => pairs.map(([value, title]) => ({ const: value, title }));

/** Tools whose point is a JSON Schema reaching the client exactly as written. */
export const FIXTURE_SCHEMA_TOOLS: Record<string, FixtureTool> = {
  // SEP-1613 and SEP-2106: 2020-12 keywords in an input schema must survive tools/list.
  json_schema_2020_12_tool: {
    description: 'Takes a contact whose input schema uses JSON Schema 2020-12 keywords.',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
    run: async (args) => text(`Contact received: ${JSON.stringify(args)}`),
  },
  // SEP-1034: a default for every primitive type.
  test_elicitation_sep1034_defaults: {
    description: 'Asks for a profile whose fields all carry defaults.',
    inputSchema: object({}),
    run: async (_args, ctx) =>
      elicitOnce(
        ctx,
        'Check the profile; every field is filled in with its default.',
        object({
          name: { type: 'string', description: 'Name', default: 'John Doe' },
          age: { type: 'integer', description: 'Age', default: 30 },
          score: { type: 'number', description: 'Score', default: 95.5 },
          status: { type: 'string', description: 'Status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verified', default: true },
        }),
      ),
  },
  // SEP-1330: the five enum shapes.
  test_elicitation_sep1330_enums: {
    description: 'Asks for choices in each enum shape: plain, titled, legacy enumNames, plain multi, titled multi.',
    inputSchema: object({}),
    run: async (_args, ctx) =>
      elicitOnce(
        ctx,
        'Pick your options.',
        object({
          untitledSingle: { type: 'string', description: 'One option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'One titled option',
            oneOf: titled([
              ['value1', 'First Option'],
              ['value2', 'Second Option'],
              ['value3', 'Third Option'],
            ]),
          },
          legacyEnum: {
            type: 'string',
            description: 'One option (enumNames, deprecated)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Several options',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Several titled options',
            items: {
              anyOf: titled([
                ['value1', 'First Choice'],
                ['value2', 'Second Choice'],
                ['value3', 'Third Choice'],
              ]),
            },
          },
        }),
      ),
  },
};
