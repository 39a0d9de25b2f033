import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { CREATE_WAIT_MS } from '../../src/engine/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { makeRecord } from '../helpers/records.js';
import { ROOT, StdioPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

/** Another process holding the file's lock until `release()`. */
async function holdLock(path: string, mode: 'immediate' | 'exclusive'): Promise<{ release(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'test/fixtures/lock-holder.mjs'), path, mode], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return {
    release: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      await exited;
    },
  };
}

const timed = async <T>(work: Promise<T>): Promise<{ value: T; ms: number }> => {
  const start = Date.now();
  const value = await work;
  return { value, ms: Date.now() - start };
};

describe('a SQLite file locked by another process while the server runs', () => {
  const store = join(tempDir(), 'tasks.db');
  let peer: StdioPeer;
  const create = () => peer.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} });

  beforeAll(async () => {
    peer = await StdioPeer.start({ env: { MCP_TASKS_STORE: store } });
    await peer.initialize();
    expect((await create()).result?.['task']).toBeDefined();
  });
  afterAll(async () => peer.close());

  it('answers unrelated requests at once while a creation waits for the lock, then creates the task', async () => {
    const lock = await holdLock(store, 'immediate');
    const creation = timed(create());
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Loose bound: the old synchronous 5 s busy wait held every request for seconds.
    const pings = await Promise.all([1, 2, 3].map(() => timed(peer.request('ping'))));
    for (const ping of pings) expect(ping.ms).toBeLessThan(1500);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await lock.release();
    const created = await creation;
    expect(created.value.error).toBeUndefined();
    expect(created.ms).toBeGreaterThanOrEqual(1500);
    const taskId = (created.value.result?.['task'] as { taskId: string }).taskId;
    expect((await peer.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
  });

  it('gives up after the creation wait with -32603 (not created), and works again once the lock is gone', async () => {
    const lock = await holdLock(store, 'immediate');
    const creation = timed(create());
    const ping = await timed(peer.request('ping'));
    expect(ping.ms).toBeLessThan(1500);
    const refused = await creation;
    expect(refused.value.error?.code).toBe(-32603);
    // A busy store is asked again until the creation's wait (CREATE_WAIT_MS) is over; nothing was stored.
    expect(refused.value.error?.message).toBe(
      'Internal error: the task store or the job queue did not answer in time; the task was not created',
    );
    expect(refused.ms).toBeGreaterThanOrEqual(CREATE_WAIT_MS - 500);
    await lock.release();
    expect((await create()).result?.['task']).toBeDefined();
  }, 30_000);
});

describe('SqliteStore under another process’s write lock', () => {
  it('waits on timers, never blocking the event loop, for task and step-journal writes alike', async () => {
    const path = join(tempDir(), 'tasks.db');
    const store = new SqliteStore({ path, changePollMs: 0 });
    await store.init();
    await store.journal.init();
    const lock = await holdLock(path, 'immediate');
    let ticks = 0;
    let longestGap = 0;
    let last = Date.now();
    const ticker = setInterval(() => {
      ticks++;
      longestGap = Math.max(longestGap, Date.now() - last);
      last = Date.now();
    }, 20);
    const writes = Promise.all([store.insert(makeRecord({ taskId: 'busy-1' })), store.journal.setWake('busy-1', 5)]);
    await new Promise((resolve) => setTimeout(resolve, 800));
    await lock.release();
    await writes;
    clearInterval(ticker);
    // Loose: timers kept firing while both writes waited (a blocking wait would leave one gap of the whole hold).
    expect(ticks).toBeGreaterThan(10);
    expect(longestGap).toBeLessThan(500);
    expect((await store.get('busy-1'))?.taskId).toBe('busy-1');
    expect(await store.journal.due(10, 10)).toEqual([{ taskId: 'busy-1', wakeAt: 5 }]);
    await store.close();
  });
});

describe('start-up on a store that cannot be used', () => {
  const dir = tempDir();
  const immutable: string[] = [];
  afterEach(() => {
    for (const path of immutable.splice(0)) spawnSync('chattr', ['-i', path]);
  });

  /** Runs the demo server (or `mcp-tasks serve`) on `store` until it exits. */
  const start = (store: string, command: 'demo' | 'serve') =>
    spawnSync(
      process.execPath,
      command === 'demo'
        ? [join(ROOT, 'dist/examples/demo/server.js')]
        : [join(ROOT, 'dist/src/cli/main.js'), 'serve', '--port', '0'],
      {
        env: { ...process.env, MCP_TASKS_STORE: store, PORT: '0', LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );

  const expectOneLine = (run: ReturnType<typeof start>, store: string, cause: RegExp) => {
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`SQLite store ${store}`);
    expect(lines[0]).toMatch(cause);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  };

  it.each(['demo', 'serve'] as const)('%s: a corrupt file', (command) => {
    const store = join(dir, `corrupt-${command}.db`);
    writeFileSync(store, Buffer.alloc(8192, 0x5a));
    expectOneLine(start(store, command), store, /file is not a database/);
  });

  it('demo: a file locked by another process', async () => {
    const store = join(dir, 'locked.db');
    const lock = await holdLock(store, 'exclusive');
    try {
      const run = await new Promise<ReturnType<typeof start>>((resolve) => {
        // Asynchronously, so the lock holder keeps running meanwhile.
        const child = spawn(process.execPath, [join(ROOT, 'dist/examples/demo/server.js')], {
          env: { ...process.env, MCP_TASKS_STORE: store, PORT: '0', LOG_LEVEL: 'warn' },
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('exit', (status) => resolve({ status, stderr } as ReturnType<typeof start>));
      });
      expectOneLine(run, store, /is locked by another process/);
    } finally {
      await lock.release();
    }
  }, 20_000);

  it.each([
    ['PostgreSQL', (port: number) => `postgres://postgres:s3cret@127.0.0.1:${port}/tasks`],
    ['Redis', (port: number) => `redis://:s3cret@127.0.0.1:${port}`],
  ] as const)('demo: a %s store that cannot be reached', async (kind, url) => {
    const port = await closedPort();
    const run = start(url(port), 'demo');
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`Cannot open the ${kind} store`);
    expect(lines[0]).toContain(`127.0.0.1:${port}`);
    expect(lines[0]).toMatch(/ECONNREFUSED/);
    expect(run.stderr).not.toContain('s3cret');
  });

  const canChattr = spawnSync('chattr', ['--help']).error === undefined;
  it.runIf(canChattr)('demo: a read-only file and a read-only directory', (context) => {
    const file = join(dir, 'readonly.db');
    writeFileSync(file, '');
    const locked = tempDir();
    for (const path of [file, locked]) {
      if (spawnSync('chattr', ['+i', path]).status !== 0) context.skip(); // this file system cannot make it immutable
      immutable.push(path);
    }
    expectOneLine(start(file, 'demo'), file, /readonly database|unable to open/);
    // The store creates its file itself (mode 0600), so the refusal is the OS's, named with the path.
    const inside = join(locked, 'tasks.db');
    expectOneLine(
      start(inside, 'demo'),
      inside,
      /EPERM: operation not permitted, open|EACCES: permission denied, open/,
    );
  });
});

/** A loopback port nothing listens on: bound once to learn a free one, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
