/** Runs `op` repeatedly for about `ms` milliseconds (after a warm-up) and returns operations per second. */
export async function opsPerSecond(op: (i: number) => unknown, ms = 1000): Promise<number> {
  for (let i = 0; i < 200; i++) await op(i);
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let j = 0; j < 100; j++) await op(count++);
    elapsed = performance.now() - start;
  }
  return (count / elapsed) * 1000;
}

/** Percentile of a sample (p in 0..100). */
export function percentile(sample: number[], p: number): number {
  const sorted = [...sample].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The median of `runs` measurements of `opsPerSecond`: one slow second (a GC, a neighbour's burst) does not decide. */
export async function medianOpsPerSecond(op: (i: number) => unknown, runs = 3, ms = 700): Promise<number> {
  const results: number[] = [];
  for (let run = 0; run < runs; run++) results.push(await opsPerSecond(op, ms));
  return percentile(results, 50);
}
