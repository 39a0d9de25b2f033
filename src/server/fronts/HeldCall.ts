import type { InputAnswer, TaskOutcome, TaskRequest } from '../../engine/index.js';
import { ErrorCodes, isObject } from '../../rpc/index.js';
import { runInternalCall } from '../work/LegacyInternalCall.js';
import type { ServerFactory } from '../ServerLike.js';

/** One question of the tool: an elicitation, sampling or roots request, as the tool sent it. */
export interface HeldQuestion {
  method: string;
  params?: Record<string, unknown>;
}

/** Where a round of a held call stopped: the call ended, or it waits for answers to these questions. */
export type HeldRound =
  { kind: 'outcome'; outcome: TaskOutcome } | { kind: 'questions'; questions: Record<string, HeldQuestion> };

/** Questions a tool asks together (`Promise.all`) reach the link a few ticks apart; they make one round. */
const GATHER_MS = 20;

/**
 * A call of a tool written in the request style (`elicitInput`, `requestSampling`) made by a client that can only
 * answer questions as multi-round-trip results (2026-07-28 without a task). The tool runs once, on a 2025-11-25
 * internal link, and stays suspended in its `await` while the client answers; each round runs it until it ends or
 * waits on questions nobody has answered yet.
 */
export class HeldCall {
  private readonly abort = new AbortController();
  private readonly pending = new Map<string, { question: HeldQuestion; settle(answer: InputAnswer): void }>();
  private asked = 0;
  private outcome: TaskOutcome | undefined;
  private wake: (() => void) | undefined;
  private relay: ((method: string, params: Record<string, unknown>) => void) | undefined;

  constructor(
    factory: ServerFactory,
    request: TaskRequest,
    readonly owner: string,
    clientCapabilities: Record<string, unknown>,
  ) {
    runInternalCall(factory, request, {
      signal: this.abort.signal,
      clientCapabilities,
      requestInput: (question) => this.ask(question),
      onProgress: (params) => this.relay?.('notifications/progress', params),
      onLog: (params) => this.relay?.('notifications/message', params),
    })
      .catch((error: unknown): TaskOutcome => ({
        kind: 'error',
        error: { code: ErrorCodes.INTERNAL_ERROR, message: `Internal error: ${String(error)}` },
      }))
      .then((outcome) => {
        this.outcome = outcome;
        this.wake?.();
      });
  }

  /** Records the answers to outstanding questions; answers to other keys are ignored (spec E12, by analogy). */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, value] of Object.entries(responses ?? {})) {
      const entry = this.pending.get(key);
      if (!entry || !isObject(value)) continue;
      this.pending.delete(key);
      entry.settle({ result: value });
    }
  }

  /**
   * Lets the tool run until it ends or waits on unanswered questions. Progress and log messages go to `relay` (the
   * exchange serving this round). When `signal` aborts (the client went away), the tool is cancelled.
   */
  async round(
    signal: AbortSignal,
    relay: (method: string, params: Record<string, unknown>) => void,
  ): Promise<HeldRound> {
    this.relay = relay;
    const onAbort = () => this.cancel('The client closed the request');
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (this.outcome) return { kind: 'outcome', outcome: this.outcome };
        if (this.pending.size > 0) {
          await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
          if (this.outcome || this.pending.size === 0) continue;
          const questions = Object.fromEntries([...this.pending].map(([key, entry]) => [key, entry.question]));
          return { kind: 'questions', questions };
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.relay = undefined;
    }
  }

  /** Stops the tool (its AbortSignal fires) and releases what it was waiting on. */
  cancel(reason: string): void {
    this.abort.abort(new Error(reason));
    for (const [key, entry] of this.pending) {
      this.pending.delete(key);
      entry.settle({ error: { code: ErrorCodes.INTERNAL_ERROR, message: reason } });
    }
  }

  private ask(question: { method: string; params?: Record<string, unknown> }): Promise<InputAnswer> {
    return new Promise((settle) => {
      // Keys are never reused within a call, so a late answer cannot land on a newer question.
      this.pending.set(`q${++this.asked}`, { question, settle });
      this.wake?.();
    });
  }
}
