import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { INTERRUPTED_MESSAGE, TaskEngine } from '../../src/engine/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';

const writer = fileURLToPath(new URL('../fixtures/burst-writer.mjs', import.meta.url));

describe('crash safety on SQLite', () => {
  it('loses no acknowledged task when the process is killed mid-burst, and recovers the ones left running', async () => {
    const path = join(tempDir(), 'crash.db');
    const child = spawn(process.execPath, [writer, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acknowledged: string[] = [];
    let buffer = '';
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code, signal) =>
        signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code}`)),
      );
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        acknowledged.push(...lines.filter(Boolean));
        if (acknowledged.length >= 400 && !child.killed) child.kill('SIGKILL');
      });
    });
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);

    // Straight from the file, before any recovery ran: every acknowledged task is there, still running.
    const raw = new SqliteStore({ path });
    await raw.init();
    for (const taskId of acknowledged) expect((await raw.get(taskId))?.status).toBe('working');
    await raw.close();

    const engine = new TaskEngine({
      store: new SqliteStore({ path }),
      leaseMs: 500,
      sweepIntervalMs: 0,
      recoveryIntervalMs: 0,
    });
    await engine.start();
    try {
      // Leases of the dead process run out within one lease; the scan then fails every task it left running.
      await new Promise((resolve) => setTimeout(resolve, 600));
      await engine.recover();
      for (const taskId of acknowledged) {
        const task = await engine.get('burst', taskId);
        expect(task.status).toBe('failed');
        expect(task.statusMessage).toBe(INTERRUPTED_MESSAGE);
      }
    } finally {
      await engine.close();
    }
  });
});
