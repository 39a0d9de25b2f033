/** Why a bearer-protected request is refused (RFC 6750 §3.1). */
export type BearerRefusal =
  | { kind: 'missing' }
  | { kind: 'invalid_token'; description: string }
  | { kind: 'insufficient_scope'; description: string; scope: string[] };

const quoted = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`;

/**
 * The HTTP refusal with its `WWW-Authenticate: Bearer` challenge, pointing at the Protected Resource Metadata so a
 * client can discover the authorization server (MCP authorization: 401 for a missing or invalid token, 403 for
 * insufficient scope). A request without credentials gets no error code, as RFC 6750 asks.
 */
export function bearerChallenge(refusal: BearerRefusal, resourceMetadataUrl: string, scopes?: string[]): Response {
  const params: string[] = [];
  if (refusal.kind !== 'missing')
    params.push(`error=${quoted(refusal.kind)}`, `error_description=${quoted(refusal.description)}`);
  const scope = refusal.kind === 'insufficient_scope' ? refusal.scope : scopes;
  if (scope && scope.length > 0) params.push(`scope=${quoted(scope.join(' '))}`);
  params.push(`resource_metadata=${quoted(resourceMetadataUrl)}`);
  const body =
    refusal.kind === 'missing'
      ? { error: 'unauthorized', error_description: 'A bearer token is required' }
      : { error: refusal.kind, error_description: refusal.description };
  return Response.json(body, {
    status: refusal.kind === 'insufficient_scope' ? 403 : 401,
    headers: { 'www-authenticate': `Bearer ${params.join(', ')}` },
  });
}
