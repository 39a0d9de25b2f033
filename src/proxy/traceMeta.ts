import { context, propagation } from '@opentelemetry/api';

/**
 * The active W3C trace context as MCP carries it in `params._meta` (`traceparent`, `tracestate`), so the upstream's
 * spans join the caller's trace; undefined when nothing is traced (no SDK, or no active span).
 */
export function traceMeta(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}
