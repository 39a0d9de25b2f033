import { randomBytes } from 'node:crypto';

import {
  answerError,
  type Answerer,
  type DialectAnswer,
  type DialectContext,
  type ServerDialect,
  type SessionView,
} from '../../dialects/index.js';
import { declaresTasksExtension, envelopeCapabilities, ResultType } from '../../protocol/index.js';
import { ErrorCodes, RpcError, isObject, paramsOf, type JsonRpcRequest } from '../../rpc/index.js';
import { HeldCall } from './HeldCall.js';
import type { ServerFactory } from '../ServerLike.js';

export interface HeldCallLimits {
  /** Calls waiting for their client's answers at once, in this process. Default 256. */
  maxHeld: number;
  /** How long a call waits for the retry that carries its answers before it is cancelled. Default 10 minutes. */
  holdMs: number;
}

export const DEFAULT_HELD_CALL_LIMITS: HeldCallLimits = { maxHeld: 256, holdMs: 10 * 60_000 };

/** Client capabilities a request-style tool can ask through. */
const INPUT_CAPABILITIES = ['elicitation', 'sampling', 'roots'];

/**
 * Plain 2026-07-28 calls (no task) of tools written in the request style: their questions become the
 * multi-round-trip `input_required` result and the retry with `inputResponses` + `requestState` continues the same
 * run. The suspended run is kept here, in memory, under an unguessable single-use `requestState`, bound to its caller;
 * so the retry must reach this process (docs/architecture.md "Questions on plain 2026-07-28 calls").
 */
export class HeldCalls implements ServerDialect {
  private readonly held = new Map<string, { call: HeldCall; timer: NodeJS.Timeout }>();
  private readonly limits: HeldCallLimits;

  constructor(
    private readonly factory: ServerFactory,
    limits: Partial<HeldCallLimits> = {},
  ) {
    this.limits = { ...DEFAULT_HELD_CALL_LIMITS, ...limits };
  }

  /** Calls waiting for answers now. */
  get size(): number {
    return this.held.size;
  }

  /** Plain 2026-07-28 calls the extension left alone; they run without a task, outside the task rate limit. */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    if (!session.modern || request.method !== 'tools/call' || !this.answers(request, session.policyFor))
      return undefined;
    return { operation: 'create', plainCall: true, answer: (r, ctx) => this.toolsCall(r, ctx) };
  }

  /**
   * Whether a 2026-07-28 `tools/call` is ours: a request-style tool named in the task policies, called without a task
   * by a client that can answer questions (or retrying with a request state we gave). Everything else is served by the
   * author's server directly, as before.
   */
  answers(request: JsonRpcRequest, policyFor: DialectContext['policyFor']): boolean {
    const params = paramsOf(request);
    const name = params?.['name'];
    if (!params || typeof name !== 'string' || declaresTasksExtension(params)) return false;
    const policy = policyFor(name);
    if (!policy || policy.inputStyle === 'multiRoundTrip' || policy.taskSupport === 'required') return false;
    if (typeof params['requestState'] === 'string') return true;
    const capabilities = envelopeCapabilities(params);
    return INPUT_CAPABILITIES.some((capability) => capabilities[capability] !== undefined);
  }

  async toolsCall(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request) ?? {};
    const { inputResponses, requestState, ...callParams } = params;
    let call: HeldCall;
    if (requestState !== undefined) {
      const resumed = typeof requestState === 'string' ? this.take(requestState, ctx.caller.owner) : undefined;
      if (!resumed) {
        return answerError(
          ErrorCodes.INVALID_PARAMS,
          'Invalid params: requestState is unknown or has expired; call the tool again without it',
        );
      }
      call = resumed;
      call.answer(isObject(inputResponses) ? inputResponses : undefined);
    } else {
      call = new HeldCall(
        this.factory,
        { method: 'tools/call', params: callParams },
        ctx.caller.owner,
        envelopeCapabilities(params),
      );
    }
    const round = await call.round(ctx.signal, (method, message) => {
      void ctx.outbound.relatedNotification({ jsonrpc: '2.0', method, params: message });
    });
    if (round.kind === 'outcome') {
      const { outcome } = round;
      return outcome.kind === 'error'
        ? { error: outcome.error }
        : { result: { ...(outcome.kind === 'result' ? outcome.result : {}), resultType: ResultType.complete } };
    }
    if (ctx.signal.aborted) return { noResponse: true };
    return {
      result: { resultType: ResultType.inputRequired, inputRequests: round.questions, requestState: this.hold(call) },
    };
  }

  /** Cancels every waiting call (the server is shutting down). */
  close(): void {
    for (const [state, entry] of this.held) {
      clearTimeout(entry.timer);
      this.held.delete(state);
      entry.call.cancel('The server is shutting down');
    }
  }

  private hold(call: HeldCall): string {
    if (this.held.size >= this.limits.maxHeld) {
      call.cancel('Too many calls are waiting for input');
      throw new RpcError(
        ErrorCodes.INVALID_REQUEST,
        `Too many calls are waiting for input (at most ${this.limits.maxHeld}); try again later`,
        { limit: 'held_calls' },
      );
    }
    // 256 random bits: the state is the capability to continue the call (next to the owner check).
    const state = randomBytes(32).toString('base64url');
    const timer = setTimeout(() => {
      this.held.delete(state);
      call.cancel('Nobody answered the questions in time');
    }, this.limits.holdMs);
    timer.unref();
    this.held.set(state, { call, timer });
    return state;
  }

  /** The call a state names, removed: each state continues its call once. Another caller's looks unknown. */
  private take(state: string, owner: string): HeldCall | undefined {
    const entry = this.held.get(state);
    if (!entry || entry.call.owner !== owner) return undefined;
    clearTimeout(entry.timer);
    this.held.delete(state);
    return entry.call;
  }
}
