import { Transform, type Readable, type Writable } from 'node:stream';

import { ErrorCodes, validateMessage } from '../../rpc/index.js';

/**
 * Filters stdin before the SDK's stdio transport reads it: a line that is not JSON, or not a valid JSON-RPC message,
 * is answered on stdout with the right JSON-RPC error (-32700, -32600, -32602) instead of being skipped in silence.
 * Valid lines pass through untouched.
 */
export function guardStdin(stdin: Readable, stdout: Writable): Readable {
  let pending = '';
  const answer = (response: unknown) => stdout.write(`${JSON.stringify(response)}\n`);
  const check = (line: string): boolean => {
    if (line.trim() === '') return false;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      answer({
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCodes.PARSE_ERROR, message: 'Parse error: a line is not valid JSON' },
      });
      return false;
    }
    const error = validateMessage(value);
    // Invalid notifications (no id to answer) and invalid responses are dropped, as JSON-RPC asks.
    if (error && (error.id !== null || !(value && typeof value === 'object' && 'method' in value && !('id' in value))))
      answer(error);
    return error === undefined;
  };
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      const valid = lines.filter((line) => check(line.replace(/\r$/, '')));
      done(null, valid.length > 0 ? `${valid.join('\n')}\n` : undefined);
    },
    flush(done) {
      done(null, pending && check(pending) ? `${pending}\n` : undefined);
    },
  });
  return stdin.pipe(guard);
}
