import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

import type Database from 'better-sqlite3';

/** How often the worker is asked to checkpoint while commits are coming in. */
export const CHECKPOINT_INTERVAL_MS = 100;

/** A failed worker is started again after this long, doubling while it keeps failing, up to the cap. */
export const RESTART_DELAY_MS = 1000;
export const MAX_RESTART_DELAY_MS = 30_000;

/** The worker: its own connection to the file, a PASSIVE checkpoint whenever asked, the outcome reported back. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = NORMAL');
} catch (error) {
  parentPort.postMessage({ failed: String(error && error.message || error) });
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    db?.close();
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ done: result });
  } catch (error) {
    // A busy file (another checkpoint under way) is tried again at the next tick; anything else is reported.
    const code = String(error && error.code || '');
    parentPort.postMessage(code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? { busy: true } : { failed: String(error.message) });
  }
});
`;

/**
 * Runs the file's WAL checkpoints on a worker thread with a connection of its own, so the event loop never copies
 * pages into the database file or waits for the two fsyncs of a checkpoint (SQLite's automatic checkpoint runs inside
 * the commit that crosses its threshold, holding the loop for as long as that takes). The store's connection turns
 * its automatic checkpoint off while the worker runs; if the worker fails, it is turned back on (`onFailure`, told
 * once per run of failures), so the WAL stays bounded either way, and a new worker is started after a back-off: a
 * passing fault (a full disk) does not cost the checkpoints off the loop until the next restart of the process. A checkpoint is asked for every `CHECKPOINT_INTERVAL_MS` while commits come in, one
 * at a time; PASSIVE, so it never waits for readers or blocks writers.
 */
export class Checkpointer {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private asked = false;
  /** The store's connection, whose automatic checkpoint the worker stands in for. */
  private db: Database.Database | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Failures since the last checkpoint that worked: 0 while the worker is sound. */
  private failures = 0;
  private closed = false;
  /** Checkpoints completed by the worker. */
  checkpoints = 0;
  /** Workers started again after a failure. */
  restarts = 0;

  constructor(
    private readonly path: string,
    private readonly onFailure: (reason: string) => void,
  ) {}

  /** Starts the worker and turns the automatic checkpoint of `db` (the store's connection) off. */
  start(db: Database.Database): void {
    this.db = db;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
    });
    worker.unref();
    this.worker = worker;
    db.pragma('wal_autocheckpoint = 0');
    worker.on('message', (message: { done?: unknown; busy?: boolean; failed?: string }) => {
      this.asked = false;
      if (message.failed !== undefined) return this.fail(message.failed);
      if (message.done) {
        this.checkpoints++;
        this.failures = 0;
      }
    });
    worker.on('error', (error) => this.fail(error.message));
    this.timer = setInterval(() => this.tick(), CHECKPOINT_INTERVAL_MS);
    this.timer.unref();
  }

  /** A commit went into the WAL: a checkpoint is due at the next tick. */
  committed(): void {
    this.dirty = true;
  }

  /** Stops the worker (before the store's connection closes, which checkpoints what is left itself). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.timer);
    this.timer = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    // Held until it has closed its connection (unreferenced, it would let the process end with the close pending).
    worker.ref();
    worker.postMessage('close');
    const timeout = setTimeout(() => void worker.terminate(), 2000);
    timeout.unref();
    await exited;
    clearTimeout(timeout);
  }

  private tick(): void {
    if (!this.dirty || this.asked || !this.worker) return;
    this.dirty = false;
    this.asked = true;
    this.worker.postMessage('checkpoint');
  }

  private fail(reason: string): void {
    if (!this.worker) return;
    const worker = this.worker;
    this.worker = undefined;
    clearInterval(this.timer);
    void worker.terminate();
    // SQLite's own automatic checkpoint until a worker works again (the caller is told once per run of failures).
    if (this.db?.open) this.db.pragma('wal_autocheckpoint = 1000');
    if (this.failures++ === 0) this.onFailure(reason);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed) return;
    const delay = Math.min(RESTART_DELAY_MS * 2 ** (this.failures - 1), MAX_RESTART_DELAY_MS);
    this.restartTimer = setTimeout(() => {
      const db = this.db;
      if (this.closed || !db?.open) return;
      this.restarts++;
      // Commits went on meanwhile: the new worker's first tick checkpoints what the old one left.
      this.dirty = true;
      this.asked = false;
      try {
        this.start(db);
      } catch {
        this.failures++;
        this.scheduleRestart();
      }
    }, delay);
    this.restartTimer.unref();
  }
}
