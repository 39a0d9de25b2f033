/** The requestor capabilities a tool may use on its way back (elicitation, sampling, roots); tasks are not nested. */
export function mirroredCapabilities(requestor: Record<string, unknown>): Record<string, unknown> {
  const mirrored: Record<string, unknown> = {};
  for (const key of ['elicitation', 'sampling', 'roots'])
    if (requestor[key] !== undefined) mirrored[key] = requestor[key];
  return mirrored;
}
