import type { TaskSnapshot } from '../client/index.js';
import { visibleLine } from './sanitize.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line live status on a terminal: spinner, status, message, elapsed time; redrawn in place. */
export class StatusLine {
  private frame = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private text = '';
  private readonly startedAt = Date.now();

  constructor(private readonly stream: NodeJS.WriteStream) {}

  show(snapshot: TaskSnapshot): void {
    const status = snapshot.cancelRequested === true ? `${snapshot.status}, stopping…` : snapshot.status;
    const progress = snapshot.progress;
    const bar = progress === undefined ? undefined : progressBar(progress.progress, progress.total);
    // Server text: its controls would act on the terminal, between the line's own erase and redraw.
    this.text = [status, snapshot.statusMessage, bar, progress?.message]
      .filter((part) => part !== undefined && part !== '')
      .map(visibleLine)
      .join('  ');
    this.timer ??= setInterval(() => this.draw(), 100);
    this.draw();
  }

  /** Clears the line so other output (a prompt, the result) starts clean. */
  clear(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.stream.write('\r\x1b[2K');
  }

  elapsedSeconds(): string {
    return ((Date.now() - this.startedAt) / 1000).toFixed(1);
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    const line = `${FRAMES[this.frame]} ${this.text}  ${this.elapsedSeconds()}s`;
    const width = this.stream.columns > 0 ? this.stream.columns - 1 : 120;
    this.stream.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
  }
}

/** `[######----] 60%` when the total is known, else the count so far. */
export function progressBar(progress: number, total: number | undefined, width = 20): string {
  if (total === undefined || total <= 0) return `(${progress})`;
  const ratio = Math.min(1, Math.max(0, progress / total));
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.round(ratio * 100)}%`;
}
