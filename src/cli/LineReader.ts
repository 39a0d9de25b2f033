import { createInterface, type Interface } from 'node:readline';

/** Reads answers from stdin one line at a time; `undefined` once stdin has ended. */
export class LineReader {
  private lines: Interface | undefined;
  private readonly buffered: string[] = [];
  private readonly waiting: Array<(line: string | undefined) => void> = [];
  private ended = false;

  next(): Promise<string | undefined> {
    this.open();
    const line = this.buffered.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    this.lines?.close();
    this.lines = undefined;
  }

  private open(): void {
    if (this.lines !== undefined || this.ended) return;
    this.lines = createInterface({ input: process.stdin, terminal: false });
    this.lines.on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter !== undefined) waiter(line);
      else this.buffered.push(line);
    });
    this.lines.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiting.splice(0)) waiter(undefined);
    });
  }
}
