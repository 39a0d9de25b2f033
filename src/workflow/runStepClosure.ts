import type { RetryPolicy, StepAttempt, StepConfig } from './Step.js';
import { StepTimeoutError } from './StepErrors.js';

export const DEFAULT_RETRIES: Required<RetryPolicy> = { limit: 3, baseDelayMs: 1000, maxDelayMs: 60_000 };

/** Wait before attempt `failed + 1`: exponential, capped, with jitter in [50 %, 100 %] so retries spread out. */
export function backoffDelay(failed: number, policy: Required<RetryPolicy>, random = Math.random): number {
  const exponential = policy.baseDelayMs * 2 ** Math.max(0, failed - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  return Math.round(capped * (0.5 + random() * 0.5));
}

/** Runs one attempt of a closure with a signal that aborts on `signal` (the task's) or after `timeoutMs`. */
export async function runStepClosure<T>(
  name: string,
  fn: (attempt: StepAttempt) => T | Promise<T>,
  attempt: number,
  signal: AbortSignal,
  timeoutMs: number | undefined,
): Promise<T> {
  signal.throwIfAborted();
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const run = Promise.resolve().then(() => fn({ signal: controller.signal, attempt }));
    const stop = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => controller.abort(new StepTimeoutError(name, timeoutMs)), timeoutMs);
      }
    });
    return await Promise.race([run, stop]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A JSON copy of a step's result, so the first run and every replay see exactly the same value. A text over
 * `maxBytes` is refused before it is parsed back: the copy would cost as much again as the text for nothing.
 */
export function journalValue(value: unknown, maxBytes = Infinity): { value?: unknown; text: string } {
  if (value === undefined) return { text: '' };
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('not JSON-serialisable');
  // A UTF-16 unit is at most 3 UTF-8 bytes, so only a text near the cap needs measuring.
  if (text.length > maxBytes / 3 && Buffer.byteLength(text) > maxBytes)
    throw new RangeError(`it is larger than ${maxBytes} bytes`);
  return { value: JSON.parse(text) as unknown, text };
}

export type StepClosure<T> = (attempt: StepAttempt) => T | Promise<T>;

/** The arguments of `step.do(name, [config], fn)`, the config defaulted. */
export function stepArgs<T>(
  configOrFn: StepConfig | StepClosure<T>,
  maybeFn?: StepClosure<T>,
): { config: StepConfig; fn: StepClosure<T> } {
  if (typeof configOrFn === 'function') return { config: {}, fn: configOrFn };
  if (typeof maybeFn !== 'function') throw new TypeError('step.do needs a function to run');
  return { config: configOrFn, fn: maybeFn };
}
