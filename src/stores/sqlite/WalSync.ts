import { closeSync, fdatasync, fstatSync, openSync, statSync } from 'node:fs';

/**
 * Flushes under way at once, at most. A commit starts its own flush rather than waiting for the one under way to be
 * reported back to the event loop, which under load takes a turn of the loop; each flush holds a thread of libuv's
 * pool (4 by default), which file I/O shares, so only a few run together.
 */
const MAX_IN_FLIGHT = 2;

/** One flush: the commits it makes durable, and how it ended. */
interface Flight {
  batch: Array<(error?: Error) => void>;
  done: boolean;
  error: Error | undefined;
}

/**
 * Makes commits durable off the event loop. The connection commits with `synchronous=NORMAL` (frames written to the
 * WAL file, no fsync), and this flushes the WAL file with `fdatasync` on libuv's thread pool; a commit is reported
 * durable only once a flush that started after it has finished. A commit starts its flush at once while fewer than
 * MAX_IN_FLIGHT are under way; past that, the commits made meanwhile share the next one, so the fsync rate bounds
 * the rounds, not the writes, and the event loop never waits for the disk (with `synchronous=FULL` SQLite fsyncs
 * inside the commit, holding the loop for the whole flush).
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
  /** Flushes started and not yet reported, in the order they started. */
  private flights: Flight[] = [];
  private idle: Array<() => void> = [];
  /** Descriptors of WAL files replaced under the path, closed once no flush may still be using them. */
  private retired: number[] = [];
  /** Flushes started so far. */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Calls `settle` once a flush that started after this call has finished (with its error, if it failed). */
  afterCommit(settle: (error?: Error) => void): void {
    this.waiting.push(settle);
    if (this.flights.length < MAX_IN_FLIGHT) this.flush();
  }

  /** Resolves once no flush is under way or waiting (before the connection closes). */
  settled(): Promise<void> {
    if (this.flights.length === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Closes the file (after `settled`). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.inode = undefined;
    this.closeRetired();
  }

  private closeRetired(): void {
    for (const fd of this.retired.splice(0)) closeSync(fd);
  }

  private flush(): void {
    const flight: Flight = { batch: this.waiting, done: false, error: undefined };
    this.waiting = [];
    this.flights.push(flight);
    const end = (error: Error | undefined) => {
      flight.done = true;
      flight.error ??= error;
      this.report();
    };
    let fd: number | undefined | Error;
    try {
      fd = this.currentFd();
    } catch (error) {
      fd = error as Error;
    }
    if (typeof fd !== 'number') {
      // Settled on a later tick, as a flush would be: never inside the commit that asked.
      const error = fd;
      setImmediate(() => end(error));
      return;
    }
    this.flushes++;
    fdatasync(fd, (error) => end(error ?? undefined));
  }

  /**
   * Settles the finished flushes in the order they started. A failed flush fails the flushes under way beside it as
   * well: the kernel reports a write-back error to one of the calls that wait on it, and another may return success
   * for a commit whose pages were lost.
   */
  private report(): void {
    while (this.flights[0]?.done) {
      const flight = this.flights.shift() as Flight;
      if (flight.error) for (const other of this.flights) other.error ??= flight.error;
      for (const settle of flight.batch) settle(flight.error);
    }
    if (this.waiting.length > 0 && this.flights.length < MAX_IN_FLIGHT) return this.flush();
    if (this.flights.length > 0) return;
    this.closeRetired();
    if (this.waiting.length === 0) for (const resolve of this.idle.splice(0)) resolve();
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
    // A flush under way may still be using the old descriptor: closing it now could fail that flush, or hand its
    // number to another file before the flush's call runs.
    if (this.fd !== undefined) this.retired.push(this.fd);
    const fd = openSync(this.walPath, 'r+');
    this.fd = fd;
    this.inode = fstatSync(fd).ino;
    return fd;
  }
}
