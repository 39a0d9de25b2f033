import { randomUUID } from 'node:crypto';

import type { TaskProgress } from './TaskSnapshot.js';

/** Whoever follows a call and shows its progress (a `TaskHandle`). */
export interface ProgressTarget {
  reportProgress(progress: TaskProgress): void;
}

interface Route {
  target?: ProgressTarget;
  /** The latest report; progress may arrive before the handle for the call exists. */
  last?: TaskProgress;
}

/** Every token this client makes starts so, which tells a late report of ours from someone else's. */
const TOKEN_PREFIX = 'mcp-tasks:';

/**
 * Routes `notifications/progress` to the handle of the call that sent the token. The SDK forgets a token once the
 * call's response (the created task) arrives, but the token stays valid for the task's life (spec R55), so routing
 * is done here, for as long as the call is followed.
 */
export class ProgressRouter {
  private readonly routes = new Map<string, Route>();
  private readonly tokens = new WeakMap<ProgressTarget, string>();

  /** A fresh token for a call about to be sent; progress for it is kept until `bind` names its handle. */
  open(): string {
    const token = `${TOKEN_PREFIX}${randomUUID()}`;
    this.routes.set(token, {});
    return token;
  }

  /** The call's handle exists: it gets the latest report at once and every later one. */
  bind(token: string, target: ProgressTarget): void {
    const route = this.routes.get(token);
    if (route === undefined) return;
    route.target = target;
    this.tokens.set(target, token);
    if (route.last !== undefined) target.reportProgress(route.last);
  }

  /** The call never started: its token routes nothing. */
  release(token: string): void {
    this.routes.delete(token);
  }

  /** The call's handle settled: its token routes nothing more. */
  releaseTarget(target: ProgressTarget): void {
    const token = this.tokens.get(target);
    if (token !== undefined) this.routes.delete(token);
  }

  /** Delivers one notification's params; `true` when the token is one of ours (a late one is dropped). */
  route(params: Record<string, unknown> | undefined): boolean {
    const token = params?.['progressToken'];
    if (typeof token !== 'string') return false;
    const route = this.routes.get(token);
    if (route === undefined) return token.startsWith(TOKEN_PREFIX);
    const progress = params?.['progress'];
    if (typeof progress !== 'number') return true;
    const total = params?.['total'];
    const message = params?.['message'];
    const update: TaskProgress = {
      progress,
      ...(typeof total === 'number' && { total }),
      ...(typeof message === 'string' && { message }),
    };
    route.last = update;
    route.target?.reportProgress(update);
    return true;
  }

  get size(): number {
    return this.routes.size;
  }
}
