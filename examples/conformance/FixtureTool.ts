import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';

import type { ToolTaskPolicy } from 'mcp-tasks';

export type FixtureArgs = Record<string, unknown>;

/** What a fixture tool returns: a tool result, or (2026-07-28 multi-round-trip) a request for client input. */
export type FixtureToolResult = CallToolResult | InputRequiredResult;

/** One tool of the conformance fixture server, described as plain JSON so every keyword reaches tools/list as written. */
export interface FixtureTool {
  description: string;
  inputSchema: Record<string, unknown>;
  policy?: ToolTaskPolicy;
  run(args: FixtureArgs, ctx: ServerContext): Promise<FixtureToolResult>;
}

/** A result of one text block. */
export const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** A JSON Schema object with these properties. */
export const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  required,
});
