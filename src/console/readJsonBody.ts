import { ConsoleRefusal } from './ConsoleRefusal.js';

/** The most an action's body may hold (an answer, a list of task ids): serveConsole refuses larger ones too. */
export const MAX_ACTION_BODY_BYTES = 64 * 1024;

/**
 * An action's JSON object body, read up to `MAX_ACTION_BODY_BYTES` (past it, 413 without reading on). JSON only: a
 * form on another page can send text/plain or form data without asking, never application/json.
 */
export async function readJsonBody(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new ConsoleRefusal(415, 'the body must be application/json');
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ACTION_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ConsoleRefusal(413, `the body is over ${MAX_ACTION_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ConsoleRefusal(400, 'the body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConsoleRefusal(400, 'the body must be a JSON object');
  return parsed as Record<string, unknown>;
}
