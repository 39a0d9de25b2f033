/**
 * A Host header that is a host and an optional port and nothing else: a DNS name or IPv4 address, or an IPv6 address
 * in brackets. Anything more (`/`, `?`, `#`, `@`, spaces) would let the header reach into the URL built from it.
 */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The URL of a node:http request, `http://<Host><path and query>`, its path and query taken from the request-target
 * alone (an absolute-form target gives its own); undefined when the Host is not a plain host[:port] or the target is
 * neither origin- nor absolute-form. Routing reads this URL's path, so no header can choose the route.
 */
export function requestUrlOf(host: string | string[] | undefined, target: string | undefined): string | undefined {
  if (typeof host !== 'string' || !HOST.test(host) || target === undefined) return undefined;
  // The Host holds no `/`, `?`, `#` or `@`, so the authority ends where it does and the path is the target's.
  if (target.startsWith('/')) return `http://${host}${target}`;
  if (!/^https?:\/\//i.test(target)) return undefined;
  try {
    const absolute = new URL(target);
    return `http://${host}${absolute.pathname}${absolute.search}`;
  } catch {
    return undefined;
  }
}
