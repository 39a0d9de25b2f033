import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { HandleStore, type StoredHandle } from '../../src/client/index.js';
import { tempDir } from '../helpers/tmp.js';

const record = (taskId: string): StoredHandle => ({
  taskId,
  dialect: '2025-11-25',
  target: 'http http://127.0.0.1:1/mcp',
  endpoint: { kind: 'http', url: 'http://127.0.0.1:1/mcp' },
  storedAt: new Date().toISOString(),
});

describe('HandleStore', () => {
  it('keeps handles in one JSON file across instances, written atomically and owner-only', async () => {
    const dir = tempDir();
    const path = join(dir, 'nested', 'handles.json');
    const store = new HandleStore(path);
    expect(await store.list()).toEqual([]);
    // Concurrent writes from one process are serialised: none is lost.
    await Promise.all(['a', 'b', 'c', 'd'].map((id) => store.put(record(id))));
    await store.update('b', { answeredKeys: ['q1'] });
    await store.remove('c');
    const reopened = new HandleStore(path);
    expect((await reopened.list()).map((handle) => handle.taskId).sort()).toEqual(['a', 'b', 'd']);
    expect((await reopened.get('b'))?.answeredKeys).toEqual(['q1']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // No temporary files are left behind.
    expect(await readdir(join(dir, 'nested'))).toEqual(['handles.json']);
  });
});
