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

  it('keeps at most maxHandles, making room by the oldest stored', async () => {
    const store = new HandleStore(join(tempDir(), 'handles.json'), { maxHandles: 3 });
    for (const [index, id] of ['a', 'b', 'c', 'd', 'e'].entries())
      await store.put({ ...record(id), storedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString() });
    expect((await store.list()).map((handle) => handle.taskId)).toEqual(['c', 'd', 'e']);
  });

  it('keeps a session per server and negotiation, and a dialect saved per server, beside the handles', async () => {
    const path = join(tempDir(), 'handles.json');
    const store = new HandleStore(path);
    await store.put(record('a'));
    const session = { target: 'http x', preference: 'auto', sessionId: 's1', storedAt: new Date().toISOString() };
    await store.putSession(session);
    await store.putSession({ ...session, preference: 'sep-1686', sessionId: 's2' });
    await store.putSession({ ...session, sessionId: 's3' });
    await store.saveDialect('http x', '2025-11-25');
    const reopened = new HandleStore(path);
    expect((await reopened.session('http x', 'auto'))?.sessionId).toBe('s3');
    expect((await reopened.session('http x', 'sep-1686'))?.sessionId).toBe('s2');
    expect(await reopened.savedDialect('http x')).toBe('2025-11-25');
    await reopened.saveDialect('http x', 'auto');
    expect(await reopened.savedDialect('http x')).toBeUndefined();
    expect((await reopened.list()).map((handle) => handle.taskId)).toEqual(['a']);
  });
});
