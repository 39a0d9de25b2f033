import { Transform, type Readable, type Writable } from 'node:stream';

import { ErrorCodes, validateMessage } from '../../rpc/index.js';
import { LineSplitter } from './LineSplitter.js';

import type { EngineLogger } from '../../engine/index.js';

export interface GuardStdinOptions {
  /** A longer line is refused with -32600 and dropped. Default 4 MiB (the HTTP body limit). */
  maxLineBytes?: number;
  /** Where refusals of oversized lines are logged. Default: one line on stderr. */
  logger?: Pick<EngineLogger, 'warn'>;
}

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

const stderrLogger: Pick<EngineLogger, 'warn'> = {
  warn: (fields, message) => void process.stderr.write(`mcp-tasks: ${message} ${JSON.stringify(fields)}\n`),
};

/**
 * Filters stdin before the SDK's stdio transport reads it: a line that is not JSON, or not a valid JSON-RPC message,
 * is answered on stdout with the right JSON-RPC error (-32700, -32600, -32602) instead of being skipped in silence; a
 * line over `maxLineBytes` is answered -32600 (with its id when the line begins with it) and dropped, instead of
 * being buffered without bound or closing the connection. Valid lines pass through untouched, one per chunk.
 */
export function guardStdin(stdin: Readable, stdout: Writable, options: GuardStdinOptions = {}): Readable {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const logger = options.logger ?? stderrLogger;
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
  let guard: Transform | undefined = undefined;
  const splitter = new LineSplitter(
    maxLineBytes,
    (line) => {
      const message = line.replace(/\r$/, '');
      if (check(message)) guard?.push(`${message}\n`);
    },
    (head, bytes) => {
      const id = leadingId(head.toString('utf8'));
      logger.warn({ maxLineBytes, bytes, id }, 'stdin line too long; refused and dropped');
      answer({
        jsonrpc: '2.0',
        id,
        error: {
          code: ErrorCodes.INVALID_REQUEST,
          message: `Request too large: a message line is limited to ${maxLineBytes} bytes`,
          data: { limit: 'maxLineBytes', maxLineBytes },
        },
      });
    },
  );
  guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      splitter.push(chunk);
      done();
    },
    flush(done) {
      splitter.end();
      done();
    },
  });
  return stdin.pipe(guard);
}

/**
 * The request id of a message whose first members (before anything nested) include `id`, as clients write them;
 * null otherwise. Enough to answer an oversized request without parsing all of it.
 */
function leadingId(head: string): string | number | null {
  const members = /^\s*\{((?:\s*"(?:jsonrpc|id|method)"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?\d+)\s*,)+)/.exec(head)?.[1];
  if (!members) return null;
  const id = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(members)?.[1];
  if (id === undefined) return null;
  return JSON.parse(id) as string | number;
}
