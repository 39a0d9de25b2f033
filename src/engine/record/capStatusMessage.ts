/**
 * The most a task's statusMessage (and a stored progress message) may take, in bytes of UTF-8: it is stored on the
 * record and served on every `tasks/get`, list page and status push, so a tool's runaway message must not grow them.
 */
export const MAX_STATUS_MESSAGE_BYTES = 4096;

const ELLIPSIS = '…';
const ELLIPSIS_BYTES = 3;
const encoder = new TextEncoder();

/**
 * `message` cut to MAX_STATUS_MESSAGE_BYTES of UTF-8 on a code point boundary, ending with `…` when cut; unchanged
 * when it fits.
 */
export function capStatusMessage(message: string, maxBytes = MAX_STATUS_MESSAGE_BYTES): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most messages are known to fit without encoding them.
  if (message.length * 3 <= maxBytes) return message;
  if (Buffer.byteLength(message, 'utf8') <= maxBytes) return message;
  // encodeInto writes whole code points only (never half a surrogate pair), and says how much of the string it read.
  const { read } = encoder.encodeInto(message, new Uint8Array(Math.max(0, maxBytes - ELLIPSIS_BYTES)));
  return message.slice(0, read) + ELLIPSIS;
}
