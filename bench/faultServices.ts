// Processes of the fault scenarios (bench/faultScenarios.ts): a Redis and a PostgreSQL of their own (own ports and
// directories, so killing them touches nothing else), and the conformance fixture's server and worker from dist/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { listeningUrl } from './listeningUrl.js';

// The built fixture, whether this runs built (dist/bench) or from source (the test suite, which needs the build).
const HERE = fileURLToPath(new URL('.', import.meta.url));
const BUILT = /[\\/]dist[\\/]bench[\\/]?$/.test(HERE) ? join(HERE, '..') : join(HERE, '..', 'dist');
const FIXTURE_SERVER = join(BUILT, 'examples/conformance/server.js');
const FIXTURE_WORKER = join(BUILT, 'examples/conformance/worker.js');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Where a command is found, if anywhere (PATH, then PostgreSQL's usual bin directories). */
export function binary(name: string): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(':'), '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];
  for (const dir of dirs) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

/** A Redis persisted with the append-only file, on a port and directory of its own. */
export class RedisProcess {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<RedisProcess> {
    const redis = new RedisProcess(await freePort(), mkdtempSync(join(tmpdir(), 'mcp-tasks-faults-redis-')));
    await redis.launch();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async launch(): Promise<void> {
    const args = ['--bind', '127.0.0.1', '--port', String(this.port), '--dir', this.dir, '--save', ''];
    // appendfsync always: with everysec, Redis may acknowledge a write it has not yet handed to the kernel (while a
    // background fsync runs), and kill -9 then loses it (an outcome recorded, then gone).
    args.push('--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction');
    const child = spawn(binary('redis-server') ?? 'redis-server', args, { stdio: 'ignore' });
    this.child = child;
    await until(() => ping(this.port), 10_000, 'redis-server');
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

async function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** A PostgreSQL cluster of its own (initdb in a temporary directory), run as the postgres user when we are root. */
export class PostgresProcess {
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly bin: string,
  ) {}

  static available(): boolean {
    return binary('initdb') !== undefined && binary('pg_ctl') !== undefined;
  }

  static async start(): Promise<PostgresProcess> {
    const initdb = binary('initdb') as string;
    const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-faults-pg-'));
    chmodSync(dir, 0o755);
    const pg = new PostgresProcess(await freePort(), dir, join(initdb, '..'));
    if (process.getuid?.() === 0) chownSync(dir, uidOf('postgres'), uidOf('postgres', 'g'));
    pg.run('initdb', ['-D', pg.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await pg.ctl('start');
    return pg;
  }

  get data(): string {
    return join(this.dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** `pg_ctl start`, `stop -m immediate` or `restart -m immediate`, waiting until done. */
  async ctl(action: 'start' | 'stop' | 'restart'): Promise<void> {
    const options = `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir} -c fsync=off`;
    const mode = action === 'start' ? [] : ['-m', 'immediate'];
    this.run('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'pg.log'),
      '-w',
      '-t',
      '30',
      ...mode,
      '-o',
      options,
      action,
    ]);
  }

  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool);
    const asRoot = process.getuid?.() === 0;
    const result = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8' })
      : spawnSync(command, args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
  }

  async stop(): Promise<void> {
    try {
      this.run('pg_ctl', ['-D', this.data, '-m', 'immediate', 'stop']);
    } catch {
      // Already stopped.
    }
  }
}

function uidOf(user: string, which: 'u' | 'g' = 'u'): number {
  return Number(spawnSync('id', [`-${which}`, user], { encoding: 'utf8' }).stdout.trim());
}

/** A fixture server or worker process; `crashed` when it ended without being told to. */
export class FixtureProcess {
  private stopping = false;
  crashed = false;
  url = '';

  private constructor(readonly child: ChildProcess) {
    child.once('exit', () => {
      if (!this.stopping) this.crashed = true;
    });
  }

  static async server(env: Record<string, string>): Promise<FixtureProcess> {
    const child = spawn(process.execPath, [FIXTURE_SERVER], {
      env: { ...process.env, ...env, PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const fixture = new FixtureProcess(child);
    fixture.url = await listeningUrl(child);
    return fixture;
  }

  static async worker(env: Record<string, string>): Promise<FixtureProcess> {
    const child = spawn(process.execPath, [FIXTURE_WORKER], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const fixture = new FixtureProcess(child);
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('fixture worker ready')) resolve();
        if (seen.length > 100_000) seen = seen.slice(-1000);
      });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${seen.slice(-2000)}`)));
    });
    return fixture;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Ends the process on purpose (SIGKILL when `hard`). */
  async stop(hard = false): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(hard ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
