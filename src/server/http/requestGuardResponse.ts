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

/** Verdicts per header pair, per options object: a client sends the same Host and Origin with every request. */
const verdicts = new WeakMap<RequestGuardOptions, Map<string, boolean>>();
/** Header pairs remembered per options object; past it the memory starts again (many hosts cost a parse each). */
const MAX_VERDICTS = 64;

/** Whether a request with these headers passes the checks `requestGuardResponse` makes (no Request needed). */
export function passesRequestGuard(
  host: string | undefined,
  origin: string | undefined,
  options: RequestGuardOptions,
): boolean {
  let known = verdicts.get(options);
  if (!known) verdicts.set(options, (known = new Map()));
  // Neither header holds a newline (node:http refuses one), so the pair is unambiguous; a missing header is `-`.
  const key = `${host === undefined ? '-' : `+${host}`}\n${origin === undefined ? '-' : `+${origin}`}`;
  const remembered = known.get(key);
  if (remembered !== undefined) return remembered;
  const hosts = options.allowedHostnames ?? LOCALHOST;
  const verdict =
    validateHostHeader(host, hosts).ok && validateOriginHeader(origin, options.allowedOrigins ?? hosts).ok;
  if (known.size >= MAX_VERDICTS) known.clear();
  known.set(key, verdict);
  return verdict;
}
