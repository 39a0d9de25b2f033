/**
 * A store's statement refused before it was sent (no connection came within the store's wait). Stores throw it so the
 * engine can tell "certainly not applied" from a reply lost on a dropped connection, which may have been applied.
 */
export class NotSentError extends Error {
  override readonly name = 'NotSentError';
}
