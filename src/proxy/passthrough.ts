import type { InputRoute } from './InputRoute.js';

export type { RpcError } from './InputRoute.js';

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** The call's own route for the questions that arrive on its stream (HTTP upstreams). */
  route?: InputRoute;
  timeoutMs?: number;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * A result schema (Standard Schema) that accepts any object unchanged: the proxy forwards results as the upstream
 * sent them instead of the SDK's parsed and reshaped view.
 */
export const PASSTHROUGH = {
  '~standard': {
    version: 1 as const,
    vendor: 'mcp-tasks',
    types: undefined as unknown as { input: unknown; output: Record<string, unknown> },
    validate: (value: unknown) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { value: value as Record<string, unknown> }
        : { issues: [{ message: 'expected a JSON object result' }] },
  },
};
