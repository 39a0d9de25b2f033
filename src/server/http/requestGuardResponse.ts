import {
  hostHeaderValidationResponse,
  originValidationResponse,
  validateHostHeader,
  validateOriginHeader,
} from '@modelcontextprotocol/server';

export interface RequestGuardOptions {
  /** Hostnames accepted in the Host header (DNS-rebinding protection). Default: localhost names only. */
  allowedHostnames?: string[];
  /**
   * Hostnames accepted in the Origin header a browser sends (`https://app.example.com` → `app.example.com`; an entry
   * `chrome-extension://*` admits every origin of that scheme). A request without Origin passes; `Origin: null` and
   * anything unparseable are refused. Default: the allowed Host names.
   */
  allowedOrigins?: string[];
}

const LOCALHOST = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The checks every request passes before anything else, on every path the server answers: Host against DNS
 * rebinding, Origin because the 2025-11-25 Streamable HTTP transport says servers MUST validate it (a page in a
 * browser must not drive a local server). Refusals are 403 with a JSON-RPC error.
 */
export function requestGuardResponse(request: Request, options: RequestGuardOptions): Response | undefined {
  const hosts = options.allowedHostnames ?? LOCALHOST;
  return (
    hostHeaderValidationResponse(request, hosts) ?? originValidationResponse(request, options.allowedOrigins ?? hosts)
  );
}

/** Whether a request with these headers passes the checks `requestGuardResponse` makes (no Request needed). */
export function passesRequestGuard(
  host: string | undefined,
  origin: string | undefined,
  options: RequestGuardOptions,
): boolean {
  const hosts = options.allowedHostnames ?? LOCALHOST;
  return validateHostHeader(host, hosts).ok && validateOriginHeader(origin, options.allowedOrigins ?? hosts).ok;
}
