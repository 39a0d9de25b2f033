import type { DialectName, Tool } from '../client/index.js';
import { FALLBACK_TOOL_NAMES } from '../server/index.js';
import { isObject } from '../protocol/index.js';

/** One argument of a tool, as its input schema declares it. */
export interface ToolArgument {
  name: string;
  /** The schema's `type` (several joined by `|`), `enum` choices, or `any`. */
  type: string;
  required: boolean;
  description?: string;
}

/** What `tools` shows of a tool. */
export interface ToolSummary {
  name: string;
  description?: string;
  /**
   * The declared `execution.taskSupport`; where none is declared, `forbidden` on the 2025 wires (spec §1.3: absent
   * means forbidden) and `server-decided` on the 2026 extension's wire, where the server decides per call.
   */
  taskSupport: string;
  arguments: ToolArgument[];
  inputSchema?: unknown;
}

interface ObjectSchema {
  properties?: Record<string, { type?: unknown; enum?: unknown[]; description?: unknown } | boolean>;
  required?: unknown;
}

function typeOf(property: unknown): string {
  if (!isObject(property)) return 'any';
  if (Array.isArray(property['enum'])) return property['enum'].map((value) => JSON.stringify(value)).join('|');
  const type = property['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.map(String).join('|');
  return 'any';
}

export function argumentsOf(schema: unknown): ToolArgument[] {
  if (!isObject(schema)) return [];
  const { properties, required } = schema as ObjectSchema;
  const needed = new Set(Array.isArray(required) ? required.map(String) : []);
  return Object.entries(isObject(properties) ? properties : {}).map(([name, property]) => {
    const description = isObject(property) ? property['description'] : undefined;
    return {
      name,
      type: typeOf(property),
      required: needed.has(name),
      ...(typeof description === 'string' && { description }),
    };
  });
}

const FALLBACK: ReadonlySet<string> = new Set(FALLBACK_TOOL_NAMES);

/**
 * The tools a person can call, summarised. A server lists the `task_*` fallback tools
 * (src/server/fronts/FallbackTools.ts) to hosts that do not speak tasks; this client does, so they are left out
 * wherever it speaks a task dialect.
 */
export function summarizeTools(tools: readonly Tool[], dialect: DialectName): ToolSummary[] {
  return tools
    .filter((tool) => dialect === 'none' || !FALLBACK.has(tool.name))
    .map((tool) => {
      const declared = (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
      const taskSupport =
        typeof declared === 'string' ? declared : dialect === 'ext-2026' ? 'server-decided' : 'forbidden';
      return {
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        taskSupport,
        arguments: argumentsOf(tool.inputSchema),
        ...(tool.inputSchema !== undefined && { inputSchema: tool.inputSchema }),
      };
    });
}
