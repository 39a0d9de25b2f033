import { UsageError } from './UsageError.js';

/** Splits `mcp-tasks [options] <command> ... -- <server command...>` at the first `--`. */
export function splitServerCommand(argv: readonly string[]): { cli: string[]; server: string[] | undefined } {
  const separator = argv.indexOf('--');
  if (separator === -1) return { cli: [...argv], server: undefined };
  const server = argv.slice(separator + 1);
  if (server.length === 0) throw new UsageError('Nothing follows "--": give the command that starts the server');
  return { cli: argv.slice(0, separator), server };
}

/**
 * `--json '{...}'` is both JSON-lines output and the tool arguments of `call`: the object moves to a trailing
 * `--args`, so the flag itself stays a plain switch wherever it appears.
 */
export function normalizeJsonArguments(argv: readonly string[]): string[] {
  const out: string[] = [];
  const moved: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index] as string;
    const next = argv[index + 1];
    if (token.startsWith('--json=')) {
      out.push('--json');
      moved.push('--args', token.slice('--json='.length));
    } else if (token === '--json' && next !== undefined && next.trimStart().startsWith('{')) {
      out.push('--json');
      moved.push('--args', next);
      index++;
    } else {
      out.push(token);
    }
  }
  return [...out, ...moved];
}

/** `key=value` pairs; a value that parses as JSON (a number, `true`, an object...) is used as such, else as a string. */
export function parseKeyValues(pairs: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`Tool arguments are key=value pairs; got "${pair}"`);
    const key = pair.slice(0, equals);
    const raw = pair.slice(equals + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: the text itself.
    }
    args[key] = value;
  }
  return args;
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}
