/** Where a protected MCP endpoint's Protected Resource Metadata (RFC 9728) is published. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** What the Protected Resource Metadata document says about this server. */
export interface ProtectedResourceOptions {
  /**
   * The MCP server's canonical URL (its RFC 8707 resource identifier), e.g. `https://mcp.example.com/mcp`. Default: the
   * URL the request came in on (scheme `http`, the Host header, the MCP path) — set it behind a TLS proxy.
   */
  resource?: string;
  /** Issuer URLs of the authorization servers whose tokens this server accepts. */
  authorizationServers: string[];
  /** Scopes a client may ask for (`scopes_supported`), also suggested in the 401 challenge. */
  scopesSupported?: string[];
  /** Human-readable name (`resource_name`). */
  resourceName?: string;
  /** Documentation URL (`resource_documentation`). */
  resourceDocumentation?: string;
}

/** The resource identifier: the configured one, else the request's origin with the MCP path. */
export function resourceOf(options: Pick<ProtectedResourceOptions, 'resource'>, requestUrl: string, path: string): URL {
  if (options.resource !== undefined) return new URL(options.resource);
  return new URL(path, new URL(requestUrl).origin);
}

/** The metadata URL for a resource: the well-known prefix inserted before its path (RFC 9728 §3.1). */
export function protectedResourceMetadataUrl(resource: URL): string {
  const path = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '');
  return `${resource.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/**
 * Answers a request for the metadata document, or returns undefined when `pathname` is not one of its two addresses
 * (path-inserted, as the resource's `resource_metadata` points to, and the root one clients fall back to).
 */
export function protectedResourceMetadataResponse(
  options: ProtectedResourceOptions,
  requestUrl: string,
  mcpPath: string,
): Response | undefined {
  const { pathname } = new URL(requestUrl);
  const resource = resourceOf(options, requestUrl, mcpPath);
  const inserted = new URL(protectedResourceMetadataUrl(resource)).pathname;
  if (pathname !== inserted && pathname !== PROTECTED_RESOURCE_WELL_KNOWN) return undefined;
  const document = {
    resource: resource.href,
    authorization_servers: options.authorizationServers,
    ...(options.scopesSupported && { scopes_supported: options.scopesSupported }),
    // Tokens are accepted only in the Authorization header: never in a query string (MCP authorization, OAuth 2.1).
    bearer_methods_supported: ['header'],
    ...(options.resourceName !== undefined && { resource_name: options.resourceName }),
    ...(options.resourceDocumentation !== undefined && { resource_documentation: options.resourceDocumentation }),
  };
  return Response.json(document, { headers: { 'cache-control': 'max-age=300' } });
}
