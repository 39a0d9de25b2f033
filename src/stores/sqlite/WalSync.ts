import { closeSync, fdatasync, fstatSync, openSync, statSync } from 'node:fs';

/**
 * Makes commits durable off the event loop. The connection commits with `synchronous=NORMAL` (frames written to the
 * WAL file, no fsync), and this flushes the WAL file with `fdatasync` on libuv's thread pool; a commit is reported
 * durable only once a flush that started after it has finished. One flush at a time: the commits made while one is
 * under way share the next, so the fsync rate bounds the rounds, not the writes, and the event loop never waits for
 * the disk (with `synchronous=FULL` SQLite fsyncs inside the commit, holding the loop for the whole flush).
 *
 * Checkpoints keep their own guarantee at NORMAL: SQLite syncs the WAL before copying it into the database file and
 * the database file after. A WAL file replaced meanwhile (deleted when another process closed the last connection
 * and created anew) is followed by its path: what the old one held was checkpointed and synced by that process.
 */
export class WalSync {
  private fd: number | undefined;
  private inode: number | undefined;
  /** Commits waiting for a flush that has not started yet. */
  private waiting: Array<(error?: Error) => void> = [];
  private flushing = false;
  private idle: Array<() => void> = [];
  /** Flushes started so far. */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Calls `settle` once a flush that started after this call has finished (with its error, if it failed). */
  afterCommit(settle: (error?: Error) => void): void {
    this.waiting.push(settle);
    if (!this.flushing) this.flush();
  }

  /** Resolves once no flush is under way or waiting (before the connection closes). */
  settled(): Promise<void> {
    if (!this.flushing && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Closes the file (after `settled`). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.inode = undefined;
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    let fd: number | undefined | Error;
    try {
      fd = this.currentFd();
    } catch (error) {
      fd = error as Error;
    }
    if (typeof fd !== 'number') {
      // Settled on a later tick, as a flush would be: never inside the commit that asked.
      this.flushing = true;
      const error = fd;
      setImmediate(() => {
        this.flushing = false;
        this.finish(batch, error);
      });
      return;
    }
    this.flushing = true;
    this.flushes++;
    fdatasync(fd, (error) => {
      this.flushing = false;
      this.finish(batch, error ?? undefined);
    });
  }

  private finish(batch: Array<(error?: Error) => void>, error: Error | undefined): void {
    for (const settle of batch) settle(error);
    if (this.waiting.length > 0) return this.flush();
    for (const resolve of this.idle.splice(0)) resolve();
  }

  /** The WAL file's descriptor, opened again when the path names another file than the one open. */
  private currentFd(): number | undefined {
    let inode: number;
    try {
      inode = statSync(this.walPath).ino;
    } catch (error) {
      // No WAL file: its frames can only have left it through a checkpoint, which synced the database file.
      if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
      throw error;
    }
    if (this.fd !== undefined && inode === this.inode) return this.fd;
    this.close();
    const fd = openSync(this.walPath, 'r+');
    this.fd = fd;
    this.inode = fstatSync(fd).ino;
    return fd;
  }
}
