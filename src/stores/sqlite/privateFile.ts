import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes sure the database file at `path` exists before SQLite opens it, created readable by its owner only (0600) in
 * a directory created 0700: tasks hold requests, results and answers. SQLite creates its -wal, -shm and -journal
 * files with the mode of the database file, so they are private too. An existing file keeps the mode it has (the
 * operator chose it). SQLite takes an empty file as a new database.
 */
export function ensurePrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
