import type { ToolTaskPolicy } from '../server/index.js';

export type TaskSupport = ToolTaskPolicy['taskSupport'];

/** Settings of the tools a glob matches; the proxy's own settings (timeout, concurrency) sit next to the task policy. */
export interface ProxyToolSettings extends Partial<ToolTaskPolicy> {
  /** The upstream call is cancelled and the call (or task) fails after this long. Default: no limit. */
  timeoutMs?: number;
  /** Calls of the tool forwarded to the upstream at once; more wait their turn. Default: no limit. */
  concurrency?: number;
}

export interface ToolRule {
  glob: string;
  settings: ProxyToolSettings;
}

const SUPPORT = new Set<TaskSupport>(['forbidden', 'optional', 'required']);

/** `*` matches any run of characters, `?` one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** Parses `--tools '<glob>=<forbidden|optional|required>[,…]'`. Throws with the offending entry. */
export function parseToolsOption(spec: string): ToolRule[] {
  return spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const equals = entry.lastIndexOf('=');
      const glob = entry.slice(0, equals).trim();
      const support = entry.slice(equals + 1).trim() as TaskSupport;
      if (equals <= 0 || !SUPPORT.has(support)) {
        throw new Error(`--tools entries are <glob>=<forbidden|optional|required>; got "${entry}"`);
      }
      return { glob, settings: { taskSupport: support } };
    });
}

/**
 * The settings of one tool: every matching rule applies in order, later ones overriding earlier ones, so
 * `*=optional,deploy_*=required` reads as it is written. `taskSupport` defaults to `optional`.
 */
export class ToolPolicies {
  private readonly compiled: Array<{ pattern: RegExp; settings: ProxyToolSettings }>;
  private readonly cache = new Map<string, ProxyToolSettings & { taskSupport: TaskSupport }>();

  constructor(rules: ToolRule[]) {
    this.compiled = rules.map((rule) => ({ pattern: globToRegExp(rule.glob), settings: rule.settings }));
  }

  settingsFor(toolName: string): ProxyToolSettings & { taskSupport: TaskSupport } {
    const cached = this.cache.get(toolName);
    if (cached) return cached;
    let settings: ProxyToolSettings & { taskSupport: TaskSupport } = { taskSupport: 'optional' };
    for (const rule of this.compiled) if (rule.pattern.test(toolName)) settings = { ...settings, ...rule.settings };
    // The set of names is the upstream's tools (plus whatever callers try); keep the cache bounded all the same.
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(toolName, settings);
    return settings;
  }

  /** The task policy the tasks runtime applies. */
  policyFor(toolName: string): ToolTaskPolicy {
    const { taskSupport, ttlMs, pollIntervalMs, retrySafe } = this.settingsFor(toolName);
    return {
      taskSupport,
      ...(ttlMs !== undefined && { ttlMs }),
      ...(pollIntervalMs !== undefined && { pollIntervalMs }),
      ...(retrySafe !== undefined && { retrySafe }),
    };
  }
}
