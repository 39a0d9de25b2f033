import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

import { Redis } from 'ioredis';

import { eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

/** Whether a `redis-server` binary is on PATH (scripts/services.sh installs it). */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * How often Redis syncs its append-only file. `everysec` (the default) may lose up to about two seconds of
 * acknowledged writes on a kill -9: while a slow fsync runs, Redis postpones writing and still answers. `always`
 * loses nothing acknowledged.
 */
export type AppendFsync = 'everysec' | 'always';

/**
 * A Redis of a test's own, persisted with the append-only file as production should be (`appendonly yes`,
 * `maxmemory-policy noeviction`), so it can be killed and restarted on the same data.
 */
export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly appendfsync: AppendFsync,
  ) {}

  static async start(options: { appendfsync?: AppendFsync } = {}): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), tempDir('mcp-tasks-redis-'), options.appendfsync ?? 'everysec');
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server process on the same port and data directory. */
  async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        this.appendfsync,
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    }, 10_000);
  }

  /** Stops the server process with `signal` and waits for it to exit. */
  async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}
