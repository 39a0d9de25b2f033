import type { ElicitationParams, InputContext } from '../client/index.js';
import type { LineReader } from './LineReader.js';
import type { ElicitAnswer } from './Reporter.js';
import { visibleLine, visibleText } from './sanitize.js';

interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  default?: unknown;
}

/** The values a field accepts, with labels, for enum and titled-enum fields. */
function choicesOf(field: FieldSchema): Array<{ value: string; label: string }> | undefined {
  if (Array.isArray(field.oneOf)) {
    return field.oneOf.map((option) => ({ value: String(option.const), label: option.title ?? String(option.const) }));
  }
  if (Array.isArray(field.enum)) return field.enum.map((value) => ({ value: String(value), label: String(value) }));
  return undefined;
}

function convert(field: FieldSchema, text: string): string | number | boolean | undefined {
  const choices = choicesOf(field);
  if (choices !== undefined) {
    const index = Number(text);
    if (Number.isInteger(index) && index >= 1 && index <= choices.length) return choices[index - 1]?.value;
    return choices.some((choice) => choice.value === text) ? text : undefined;
  }
  if (field.type === 'number' || field.type === 'integer') {
    const value = Number(text);
    return Number.isFinite(value) && (field.type === 'number' || Number.isInteger(value)) ? value : undefined;
  }
  if (field.type === 'boolean') {
    if (/^(y|yes|true|1)$/i.test(text)) return true;
    if (/^(n|no|false|0)$/i.test(text)) return false;
    return undefined;
  }
  return text;
}

/**
 * Asks the person at the terminal (or whatever feeds stdin) for each field of a form elicitation. Typing `:decline`
 * or `:cancel` answers that way; the end of stdin declines.
 */
export async function promptElicitation(
  params: ElicitationParams,
  context: InputContext,
  reader: LineReader,
  write: (text: string) => void,
): Promise<ElicitAnswer> {
  // Everything shown here is the server's: a question must not be able to repaint the screen around itself.
  const from = context.taskId === undefined ? '' : ` (task ${visibleLine(context.taskId)})`;
  write(`? ${visibleText(params.message)}${from}\n`);
  if (params.mode === 'url') {
    write(`  Open ${visibleLine((params as { url?: unknown }).url)} and press Enter when done (:decline to refuse)\n`);
    const line = await reader.next();
    if (line === undefined || line.trim() === ':decline') return { action: 'decline' };
    return line.trim() === ':cancel' ? { action: 'cancel' } : { action: 'accept' };
  }
  const schema = (params as { requestedSchema?: { properties?: Record<string, FieldSchema>; required?: string[] } })
    .requestedSchema;
  const required = new Set(schema?.required ?? []);
  const content: Record<string, string | number | boolean> = {};
  for (const [key, field] of Object.entries(schema?.properties ?? {})) {
    const choices = choicesOf(field);
    if (field.description !== undefined) write(`  (${visibleLine(field.description)})\n`);
    if (choices !== undefined)
      choices.forEach((choice, index) => write(`    ${index + 1}) ${visibleLine(choice.label)}\n`));
    const hint = field.default === undefined ? '' : ` [${visibleLine(field.default)}]`;
    const optional = required.has(key) ? '' : ' (optional)';
    for (let attempt = 0; ; attempt++) {
      write(`  ${visibleLine(field.title ?? key)}${optional}${hint}: `);
      const line = await reader.next();
      // Piped answers are not echoed; end the prompt line ourselves.
      if (process.stdin.isTTY !== true) write(`${visibleLine(line ?? '')}\n`);
      if (line === undefined) return { action: 'decline' };
      const text = line.trim();
      if (text === ':decline') return { action: 'decline' };
      if (text === ':cancel') return { action: 'cancel' };
      if (text === '') {
        if (field.default !== undefined) content[key] = field.default as string | number | boolean;
        if (field.default !== undefined || !required.has(key)) break;
      } else {
        const value = convert(field, text);
        if (value !== undefined) {
          content[key] = value;
          break;
        }
      }
      if (attempt >= 2) return { action: 'decline' };
      write(`  (not a valid ${visibleLine(choices === undefined ? (field.type ?? 'value') : 'choice')})\n`);
    }
  }
  return { action: 'accept', content };
}

/** JSON mode: the request went out as an event; the next stdin line is the answer (an ElicitResult, or bare content). */
export async function readJsonElicitation(reader: LineReader): Promise<ElicitAnswer> {
  const line = await reader.next();
  if (line === undefined) return { action: 'decline' };
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const action = (value as { action?: unknown }).action;
      if (action === 'accept' || action === 'decline' || action === 'cancel') return value as ElicitAnswer;
      return { action: 'accept', content: value as Record<string, string | number | boolean> };
    }
  } catch {
    // Not JSON: declined below.
  }
  return { action: 'decline' };
}
