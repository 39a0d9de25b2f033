import type { JwtAuthOptions, McpTasksOptions, RateLimit, TasksHttpHandlerOptions } from '../server/index.js';
import type { CallAdmissionOptions } from './CallAdmission.js';
import type { ProxyToolSettings, ToolRule } from './toolPolicies.js';
import type { UpstreamPoolOptions } from './UpstreamPool.js';
import { isObject } from '../protocol/index.js';

/** The `--config` file: per-tool settings by glob, and the library's limit, auth and engine options. */
export interface ProxyConfig {
  tools?: Record<string, ProxyToolSettings>;
  limits?: McpTasksOptions['limits'];
  rateLimit?: RateLimit | false;
  bindToSession?: boolean;
  concurrency?: number;
  defaultPollIntervalMs?: number;
  engine?: { leaseMs?: number; recoveryIntervalMs?: number; sweepIntervalMs?: number };
  http?: Pick<TasksHttpHandlerOptions, 'allowedHostnames' | 'sessionIdleMs'>;
  /** OAuth 2.1 bearer tokens (the library's `jwtAuth`): tasks then belong to the token's principal. */
  auth?: { jwt: JwtAuthOptions };
  /** Plain calls from clients without tasks support become tasks after `fallbackAfterMs` (default on). */
  fallbackTools?: boolean;
  fallbackAfterMs?: number;
  /** Serves the operator's console (default path `/console`) behind its token; `--console` turns it on. */
  console?: { path?: string };
  /** Restart backoff of a stdio upstream. */
  restart?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Bounds of the upstream side (docs/limits.md), and the variables a stdio upstream inherits besides the safe few. */
  upstream?: UpstreamSettings;
}

export type UpstreamSettings = Pick<UpstreamPoolOptions, 'maxConnections' | 'idleMs' | 'connectionWaitMs'> &
  CallAdmissionOptions & { env?: string[] };

const UPSTREAM_NUMBER_KEYS = [
  'maxConnections',
  'idleMs',
  'connectionWaitMs',
  'maxInFlight',
  'maxInFlightPerCaller',
  'maxQueuedPerCaller',
  'maxWaitMs',
] as const;

const NUMBER_KEYS = ['ttlMs', 'pollIntervalMs', 'timeoutMs', 'concurrency'] as const;

/** Checks a parsed config file; errors name the key. */
export function parseProxyConfig(value: unknown): ProxyConfig {
  if (!isObject(value)) throw new Error('The config file must hold a JSON object');
  const tools = value['tools'];
  if (tools !== undefined) {
    if (!isObject(tools)) throw new Error('config "tools" must be an object of <glob>: {settings}');
    for (const [glob, settings] of Object.entries(tools)) {
      if (!isObject(settings)) throw new Error(`config tools["${glob}"] must be an object`);
      for (const key of NUMBER_KEYS) {
        const n = settings[key];
        if (n !== undefined && (typeof n !== 'number' || !Number.isFinite(n) || n <= 0))
          throw new Error(`config tools["${glob}"].${key} must be a positive number`);
      }
      const support = settings['taskSupport'];
      if (support !== undefined && !['forbidden', 'optional', 'required'].includes(support as string))
        throw new Error(`config tools["${glob}"].taskSupport must be forbidden, optional or required`);
      if (settings['retrySafe'] !== undefined && typeof settings['retrySafe'] !== 'boolean')
        throw new Error(`config tools["${glob}"].retrySafe must be true or false`);
    }
  }
  const upstream = value['upstream'];
  if (upstream !== undefined) {
    if (!isObject(upstream)) throw new Error('config "upstream" must be an object');
    for (const key of UPSTREAM_NUMBER_KEYS) {
      const n = upstream[key];
      if (n !== undefined && (typeof n !== 'number' || !Number.isInteger(n) || n < 0))
        throw new Error(`config upstream.${key} must be a whole number`);
    }
    const env = upstream['env'];
    if (env !== undefined && (!Array.isArray(env) || env.some((name) => typeof name !== 'string')))
      throw new Error('config upstream.env must be an array of environment variable names');
  }
  const after = value['fallbackAfterMs'];
  if (after !== undefined && (typeof after !== 'number' || !(after >= 0)))
    throw new Error('config "fallbackAfterMs" must be a number of milliseconds');
  return value as ProxyConfig;
}

/** Config rules first, then `--tools`: the command line has the last word on task support. */
export function toolRulesOf(config: ProxyConfig, fromCommandLine: ToolRule[]): ToolRule[] {
  const fromConfig = Object.entries(config.tools ?? {}).map(([glob, settings]) => ({ glob, settings }));
  return [...fromConfig, ...fromCommandLine];
}
