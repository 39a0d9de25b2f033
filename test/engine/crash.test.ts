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
    const acknowledged = await killMidBurst(path, 400);
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

  it('takes over the tasks of its own killed predecessor as it starts, long before their leases lapse', async () => {
    const path = join(tempDir(), 'takeover.db');
    // Leases of ten minutes: only the proof that the predecessor is gone can explain a takeover now.
    const acknowledged = await killMidBurst(path, 50, 600_000);
    const engine = new TaskEngine({
      store: new SqliteStore({ path }),
      leaseMs: 600_000,
      sweepIntervalMs: 0,
      recoveryIntervalMs: 0,
    });
    await engine.start();
    try {
      for (const taskId of acknowledged) {
        const task = await engine.get('burst', taskId);
        expect(task.status).toBe('failed');
        expect(task.statusMessage).toBe(INTERRUPTED_MESSAGE);
      }
    } finally {
      await engine.close();
    }
  });

  it('leaves the tasks of a live process sharing the file alone', async () => {
    const path = join(tempDir(), 'alive.db');
    const child = spawn(process.execPath, [writer, path, '600000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const first = await new Promise<string>((resolve) =>
        child.stdout.on('data', (chunk: Buffer) => resolve(chunk.toString().split('\n')[0] as string)),
      );
      const engine = new TaskEngine({ store: new SqliteStore({ path }), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
      await engine.start();
      try {
        expect((await engine.get('burst', first)).status).toBe('working');
      } finally {
        await engine.close();
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** Runs the burst writer on `path` and kills it with SIGKILL once `count` creations were acknowledged. */
async function killMidBurst(path: string, count: number, leaseMs?: number): Promise<string[]> {
  const args = [writer, path, ...(leaseMs === undefined ? [] : [String(leaseMs)])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const acknowledged: string[] = [];
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code}`))));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      acknowledged.push(...lines.filter(Boolean));
      if (acknowledged.length >= count && !child.killed) child.kill('SIGKILL');
    });
  });
  return acknowledged;
}
