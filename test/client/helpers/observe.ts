import type { TaskHandle, TaskSnapshot } from '../../../src/client/index.js';

/** Every snapshot a person watching the handle would see, starting with the current one. */
export function observe(handle: TaskHandle): TaskSnapshot[] {
  const seen: TaskSnapshot[] = [handle.snapshot];
  handle.onUpdate((snapshot) => seen.push(snapshot));
  return seen;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'unknown']);

/** The invariant behind "never shows stopped and then a result": one terminal snapshot, and it is the last. */
export function expectSingleFinalWord(seen: TaskSnapshot[]): string {
  const terminal = seen.filter((snapshot) => TERMINAL.has(snapshot.status));
  if (terminal.length !== 1)
    throw new Error(`expected one terminal snapshot, saw ${JSON.stringify(seen.map((s) => s.status))}`);
  if (seen.at(-1) !== terminal[0]) throw new Error(`the terminal snapshot is not the last: ${JSON.stringify(seen)}`);
  return terminal[0]!.status;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
