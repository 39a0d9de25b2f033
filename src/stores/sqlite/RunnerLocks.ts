import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { ensurePrivateFile } from './privateFile.js';
import { isBusy } from './retryWhenBusy.js';

/**
 * Proof that a runner's process is gone: each runner that takes tasks in this process holds an exclusive lock on its
 * own small file beside the store (`<db>.runners/`), which the operating system releases when the process ends,
 * kill -9 included. A process opening the store takes every such lock it can get: those runners are dead, so their
 * tasks can be taken over at once instead of when their leases lapse. A lock held by a live process (this host or
 * another sharing the file system) is busy and its runner is left alone.
 */
export class RunnerLocks {
  private readonly held = new Map<string, Database.Database>();

  constructor(private readonly dir: string) {}

  /** Holds `runner`'s lock for as long as this process lives (or until release). */
  hold(runner: string): void {
    if (this.held.has(runner)) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    ensurePrivateFile(this.file(runner));
    const db = new Database(this.file(runner));
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // The first write takes the exclusive lock; in this locking mode it is kept until the connection closes.
      db.exec('CREATE TABLE IF NOT EXISTS runner (id TEXT NOT NULL)');
      db.transaction(() => {
        db.prepare('DELETE FROM runner').run();
        db.prepare('INSERT INTO runner (id) VALUES (?)').run(runner);
      })();
    } catch (error) {
      db.close();
      throw error;
    }
    this.held.set(runner, db);
  }

  /** The runners whose process is gone; their lock files are removed. */
  takeDead(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((name) => name.endsWith('.lock'));
    } catch {
      return [];
    }
    const ownFiles = new Set([...this.held.keys()].map((runner) => this.file(runner)));
    const dead: string[] = [];
    for (const name of names) {
      const file = join(this.dir, name);
      if (ownFiles.has(file)) continue;
      let db: Database.Database | undefined;
      try {
        db = new Database(file, { timeout: 0 });
        db.pragma('locking_mode = EXCLUSIVE');
        db.exec('BEGIN EXCLUSIVE');
      } catch (error) {
        db?.close();
        // Busy: its process is alive.
        if (isBusy(error)) continue;
        throw error;
      }
      try {
        const row = db.prepare('SELECT id FROM runner').get() as { id: string } | undefined;
        if (row) dead.push(row.id);
      } catch {
        // No table: its process died creating the file, before it held any task.
      }
      db.close();
      rmSync(file, { force: true });
      rmSync(`${file}-journal`, { force: true });
    }
    return dead;
  }

  /** Gives the locks up; the files stay, so the next process to open the store takes over what is left at once. */
  release(): void {
    for (const db of this.held.values()) db.close();
    this.held.clear();
  }

  private file(runner: string): string {
    return join(this.dir, `${createHash('sha256').update(runner).digest('hex').slice(0, 32)}.lock`);
  }
}
