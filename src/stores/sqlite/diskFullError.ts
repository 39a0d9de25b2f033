import { StoreUnavailableError } from '../../engine/index.js';

/**
 * A write refused because the disk is full, said in those words: SQLite's own text ("database or disk is full") names
 * neither the disk nor what became of the write. Anything else is returned as it is.
 */
export function diskFullError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'SQLITE_FULL' && code !== 'ENOSPC') return error;
  return new StoreUnavailableError(
    'The disk holding the SQLite task store is full: the write was refused and nothing of it was stored (reads are ' +
      'still served; writes resume once space is freed).',
    { cause: error, reason: 'disk_full' },
  );
}
