// What V8's garbage collector did in a child process run with `--trace-gc-nvp`: bytes allocated and promoted to the
// old generation, summed from the one line it prints per collection.
import type { Readable } from 'node:stream';

export interface GcTotals {
  /** Bytes allocated. */
  allocated: number;
  /** Bytes that survived the young generation into the old one: objects kept beyond a request's own life. */
  promoted: number;
}

/** Sums the `--trace-gc-nvp` lines of `output`; other lines (`listening on …`) pass untouched to other readers. */
export class GcTrace {
  private readonly sums: GcTotals = { allocated: 0, promoted: 0 };
  private partial = '';

  constructor(output: Readable) {
    output.on('data', (chunk: Buffer) => {
      const lines = (this.partial + chunk.toString()).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) if (line.includes(' allocated=')) this.add(line);
    });
  }

  /** The totals so far (a copy): subtract two of them for what happened in between. */
  totals(): GcTotals {
    return { ...this.sums };
  }

  private add(line: string): void {
    const field = (name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    this.sums.allocated += field('allocated');
    this.sums.promoted += field('promoted');
  }
}
