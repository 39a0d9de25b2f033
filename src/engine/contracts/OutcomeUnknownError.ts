/**
 * A store's write failed after it was sent and before its reply came (the connection dropped): it may or may not have
 * been applied. Stores throw it (or a subclass) so the engine can settle the outcome by reading back; any other
 * failure of a write means it was not applied.
 */
export class OutcomeUnknownError extends Error {
  override readonly name: string = 'OutcomeUnknownError';
}
