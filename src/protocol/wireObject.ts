/** A JSON object (not null, not an array): the only shape params, `_meta` and results may take on the wire. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `_meta` object of request or notification params, if there is one. */
export function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?.['_meta'];
  return isObject(meta) ? meta : undefined;
}
