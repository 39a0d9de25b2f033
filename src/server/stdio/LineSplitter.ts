/**
 * Splits a byte stream into lines without ever decoding a partial character or rescanning old bytes: chunks of an
 * unfinished line are kept as they came and only each new chunk is searched for a newline, so a long line costs time
 * linear in its length. A line longer than `maxLineBytes` is not kept: `onOverflow` gets its first bytes once, and the
 * rest of it, up to the next newline, is dropped.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private length = 0;
  private discarding = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: (head: Buffer, bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  /** The end of input ends an unfinished line too. */
  end(): void {
    if (this.length > 0 || this.discarding) this.endLine();
  }

  private take(part: Buffer): void {
    if (part.length === 0 || this.discarding) return;
    if (this.length + part.length > this.maxLineBytes) {
      const head = Buffer.concat([...this.chunks, part]).subarray(0, 4096);
      this.onOverflow(head, this.length + part.length);
      this.chunks = [];
      this.length = 0;
      this.discarding = true;
      return;
    }
    this.chunks.push(part);
    this.length += part.length;
  }

  private endLine(): void {
    const wasDiscarding = this.discarding;
    // A whole line decodes as UTF-8 at once: a character split across chunks is never cut (0x0a is never part of one).
    const line = Buffer.concat(this.chunks, this.length).toString('utf8');
    this.chunks = [];
    this.length = 0;
    this.discarding = false;
    if (!wasDiscarding) this.onLine(line);
  }
}
