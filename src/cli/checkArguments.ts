import { UsageError } from './UsageError.js';
import { isObject } from '../protocol/index.js';

/** Whether the schema accepts a property it does not list: `additionalProperties` true or a schema, or a pattern. */
function acceptsUnlisted(schema: Record<string, unknown>, name: string): boolean {
  const additional = schema['additionalProperties'];
  if (additional === true || isObject(additional)) return true;
  const patterns = schema['patternProperties'];
  if (!isObject(patterns)) return false;
  return Object.keys(patterns).some((pattern) => {
    try {
      return new RegExp(pattern, 'u').test(name);
    } catch {
      // A pattern JavaScript cannot read: give the benefit of the doubt.
      return true;
    }
  });
}

/**
 * Checks a call's arguments against the tool's input schema before anything is sent: every `required` property is
 * given, and every given one is listed in `properties` — unless the schema accepts others (`additionalProperties`
 * true or a schema, a matching `patternProperties`). A schema that lists no properties accepts anything. Types and
 * values are the server's to check. Throws a `UsageError` naming each unknown and missing argument.
 */
export function checkArguments(toolName: string, schema: unknown, args: Record<string, unknown>): void {
  if (!isObject(schema)) return;
  const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
  const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
  const missing = required.filter((name) => !Object.hasOwn(args, name));
  const unknown =
    properties === undefined
      ? []
      : Object.keys(args).filter((name) => !Object.hasOwn(properties, name) && !acceptsUnlisted(schema, name));
  if (missing.length === 0 && unknown.length === 0) return;
  const listed = properties === undefined ? [] : Object.keys(properties);
  const problems = [
    ...unknown.map((name) => `unknown argument "${name}"`),
    ...missing.map((name) => `missing required argument "${name}"`),
  ];
  const known = listed.length === 0 ? 'it takes no arguments' : `its arguments: ${listed.join(', ')}`;
  throw new UsageError(
    `${toolName}: ${problems.join('; ')} (${known}; see \`mcp-tasks tools\`, or --no-validate to send them as given)`,
  );
}
