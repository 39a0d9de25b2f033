import { TaskRpcError, type InputContext } from '../client/index.js';
import { ErrorCodes } from '../protocol/index.js';
import type { InputAnswer, InputRequest, InputRoute } from './InputRoute.js';

export type UpstreamNotification = { method: string; params?: Record<string, unknown> };

/**
 * Where what the upstream sends on its own goes: its questions (elicitation, sampling) to the call in flight they
 * belong to, its notifications to every listener (the pool, which serves one caller per connection). One per upstream
 * connection, whatever client currently carries it.
 */
export class UpstreamRoutes {
  private readonly routes = new Set<InputRoute>();
  private readonly listeners = new Set<(notification: UpstreamNotification) => void>();

  /** A call in flight that can take the upstream's questions, until the returned function is called. */
  register(route: InputRoute): () => void {
    this.routes.add(route);
    return () => this.routes.delete(route);
  }

  onNotification(listener: (notification: UpstreamNotification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A notification of the upstream, to every listener. */
  broadcast(notification: UpstreamNotification): void {
    for (const listener of this.listeners) listener(notification);
  }

  /** A request the upstream made on a direct call's stream: answered by that call's route, as a JSON-RPC answer. */
  async answer(request: InputRequest, own: InputRoute | undefined): Promise<InputAnswer> {
    if (request.method === 'ping') return { result: {} };
    if (request.method !== 'elicitation/create' && request.method !== 'sampling/createMessage')
      return { error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `Method not found: ${request.method}` } };
    try {
      const result = await this.route(request.method, request.params ?? {}, { dialect: '2025-11-25' }, own);
      return { result: result as Record<string, unknown> };
    } catch (error) {
      if (error instanceof TaskRpcError) return { error: error.error };
      return {
        error: { code: ErrorCodes.INTERNAL_ERROR, message: error instanceof Error ? error.message : String(error) },
      };
    }
  }

  /**
   * An upstream question goes to the call it belongs to: the call on whose stream it came, the bridged task it names,
   * else the most recent call in flight on this connection (over stdio a request carries nothing that ties it to a
   * call; the connection is one caller's, see UpstreamPool). With none, elicitation is declined.
   */
  async route(
    method: string,
    params: Record<string, unknown>,
    context: InputContext,
    own?: InputRoute,
  ): Promise<unknown> {
    let target = own;
    if (!target)
      for (const route of this.routes) {
        if (context.taskId !== undefined && route.upstreamTaskId === context.taskId) target = route;
      }
    if (!target) for (const route of this.routes) if (route.upstreamTaskId === undefined) target = route;
    if (!target) {
      if (method === 'elicitation/create') return { action: 'decline' };
      throw new TaskRpcError({ code: ErrorCodes.INTERNAL_ERROR, message: 'No call in flight can answer this request' });
    }
    const { _meta: _ignored, ...rest } = params as { _meta?: unknown };
    const answer = await target.requestInput({ method, params: rest });
    if ('error' in answer) throw new TaskRpcError(answer.error);
    return answer.result;
  }
}
