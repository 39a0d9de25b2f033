import type { TaskOutcome, TaskRequest } from '../../engine/index.js';
import { InternalLink, type InternalCallHooks } from './LegacyInternalCall.js';
import { mirroredCapabilities } from './mirroredCapabilities.js';
import type { ServerFactory } from '../ServerLike.js';

export interface InternalLinkPoolLimits {
  /** Idle links kept for one set of requestor capabilities. */
  maxIdlePerCapabilities: number;
  /** Sets of requestor capabilities with idle links; the least recently used set is closed beyond it. */
  maxCapabilitySets: number;
}

export const DEFAULT_INTERNAL_LINK_POOL_LIMITS: InternalLinkPoolLimits = {
  maxIdlePerCapabilities: 16,
  maxCapabilitySets: 16,
};

/**
 * Internal links of one server factory kept open between task runs, so a task does not pay for a fresh instance and
 * an MCP handshake. A link runs one call at a time; it is keyed by the capabilities it was initialized with (what the
 * tool sees of its requestor), and one whose call was cancelled, failed or lost its instance is closed, not reused.
 */
export class InternalLinkPool {
  /** Idle links by capabilities, least recently used set first. */
  private readonly idle = new Map<string, InternalLink[]>();

  constructor(
    private readonly factory: ServerFactory,
    private readonly limits: InternalLinkPoolLimits = DEFAULT_INTERNAL_LINK_POOL_LIMITS,
  ) {}

  /** Idle links now. */
  get size(): number {
    let size = 0;
    for (const links of this.idle.values()) size += links.length;
    return size;
  }

  async run(request: TaskRequest, hooks: InternalCallHooks): Promise<TaskOutcome> {
    const key = JSON.stringify(mirroredCapabilities(hooks.clientCapabilities));
    const link = this.idle.get(key)?.pop() ?? (await InternalLink.open(this.factory, hooks.clientCapabilities));
    if (!(link instanceof InternalLink)) return link;
    try {
      return await link.call(request, hooks);
    } finally {
      this.giveBack(key, link);
    }
  }

  /** Closes the idle links. */
  async close(): Promise<void> {
    const links = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(links.map((link) => link.close()));
  }

  private giveBack(key: string, link: InternalLink): void {
    const links = this.idle.get(key) ?? [];
    if (!link.reusable || links.length >= this.limits.maxIdlePerCapabilities) {
      void link.close();
      return;
    }
    links.push(link);
    this.idle.delete(key);
    this.idle.set(key, links);
    for (const [oldest, stale] of this.idle) {
      if (this.idle.size <= this.limits.maxCapabilitySets) break;
      this.idle.delete(oldest);
      for (const idle of stale) void idle.close();
    }
  }
}
