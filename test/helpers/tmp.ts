import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll } from 'vitest';

const made: string[] = [];

/** A throwaway directory, removed when the test file is done. */
export function tempDir(prefix = 'mcp-tasks-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

// Test files run in worker processes that never reach `exit`: clean up after each file instead.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
