/**
 * The size of a value as stored (UTF-8 JSON). A value too deep to serialize counts as infinitely large, so it is
 * refused by any size cap rather than failing later in the store.
 */
export function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
