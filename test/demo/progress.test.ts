import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, type TaskSnapshot } from '../../src/client/index.js';
import { startDemo } from '../helpers/demoServer.js';
import { tempDir } from '../helpers/tmp.js';

const FILES = 8;

/**
 * The demo's progress tool seen through TaskClient on the default wire (the 2026 extension: the requestor sends no
 * progress token, spec E16) and on 2025-11-25 (the requestor's token): both see the progress move, and the finished
 * task shows the last report.
 */
describe('demo progress through TaskClient', () => {
  let demo: Awaited<ReturnType<typeof startDemo>>;
  let root: string;

  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, 'tree'));
    for (let i = 0; i < FILES; i++) writeFileSync(join(root, 'tree', `f${i}.txt`), `file ${i}`);
    demo = await startDemo({ MCP_TASKS_STORE: join(tempDir(), 'demo.db'), MCP_TASKS_DEMO_ROOT: root });
  });
  afterAll(() => {
    demo.child.kill('SIGTERM');
  });

  for (const dialect of ['auto', '2025-11-25'] as const) {
    it(`shows increasing progress and the last report at the end (dialect ${dialect})`, async () => {
      const client = await TaskClient.connect({ url: demo.url }, { dialect });
      try {
        expect(client.dialect).toBe(dialect === 'auto' ? 'ext-2026' : '2025-11-25');
        // 300 ms a file: a report per file, slower than the server's 250 ms status throttle and the client's polls.
        const handle = await client.callTool('index_directory', { path: 'tree', delayMs: 300 }, { mode: 'task' });
        const seen: TaskSnapshot[] = [handle.snapshot];
        handle.onUpdate((snapshot) => seen.push(snapshot));
        await handle.result();
        const values = seen.flatMap((snapshot) => (snapshot.progress ? [snapshot.progress.progress] : []));
        // The bar moves: several distinct values, never going back, all of the same known total.
        expect(new Set(values).size).toBeGreaterThanOrEqual(3);
        expect(values).toEqual([...values].sort((a, b) => a - b));
        for (const snapshot of seen) if (snapshot.progress) expect(snapshot.progress.total).toBe(FILES);
        const last = seen.at(-1) as TaskSnapshot;
        expect(last.status).toBe('completed');
        // The final word is the tool's last report, not one the throttle dropped.
        expect(last.statusMessage).toBe(`hashed ${FILES}/${FILES} files`);
        expect(last.progress).toMatchObject({ progress: FILES, total: FILES });
      } finally {
        await client.close();
      }
    });
  }
});
