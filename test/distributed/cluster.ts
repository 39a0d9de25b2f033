import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { HttpFixture, ROOT, eventually, type HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

export const WORKER = join(ROOT, 'dist/examples/conformance/worker.js');

/** Bearer token of the one principal the tests act as, so every instance sees the same owner. */
export const TOKEN = 'token-dist';
const TOKENS = `${TOKEN}:distributed-tests`;

/** Echo child logs with MCP_TASKS_TEST_VERBOSE=1. */
const verbose = process.env['MCP_TASKS_TEST_VERBOSE'] === '1';

export type LogLine = Record<string, unknown> & { message?: string; taskId?: string };

/** A fixture worker process (`dist/examples/conformance/worker.js`) and its JSON log lines. */
export class WorkerProcess {
  readonly logs: LogLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private buffer = '';

  private constructor(
    readonly child: ChildProcess,
    readonly name: string,
  ) {
    // 'close', not 'exit': it comes after the last of the child's stderr has been read.
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, newline).trim();
        this.buffer = this.buffer.slice(newline + 1);
        if (!line) continue;
        if (verbose) console.error(`[${name}] ${line}`);
        try {
          this.logs.push(JSON.parse(line) as LogLine);
        } catch {
          this.logs.push({ message: line });
        }
      }
    });
  }

  static async start(name: string, env: Record<string, string>): Promise<WorkerProcess> {
    const child = spawn(process.execPath, [WORKER], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    const worker = new WorkerProcess(child, name);
    await Promise.race([
      eventually(() => worker.logs.some((line) => line.message === 'fixture worker ready'), 20_000),
      worker.exited.then(({ code }) => {
        throw new Error(`worker ${name} exited (${code}): ${JSON.stringify(worker.logs)}`);
      }),
    ]);
    return worker;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Whether this worker logged `message` for the task. */
  logged(message: string, taskId: string): boolean {
    return this.logs.some((line) => line.message === message && line.taskId === taskId);
  }

  async kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) this.child.kill(signal);
    return this.exited;
  }
}

/** A tool start, end or abort recorded by a fixture worker (MCP_TASKS_TOOL_EVENTS). */
export interface ToolEvent {
  event: 'start' | 'end' | 'abort' | 'error';
  tool: string;
  arguments: Record<string, unknown>;
  pid: number;
  time: number;
}

export interface ClusterOptions {
  store: string;
  redisUrl: string;
  queue: string;
  servers?: number;
  workers?: number;
  /** Extra environment of every process. */
  env?: Record<string, string>;
}

/**
 * N fixture servers (MCP_TASKS_EXECUTOR=queue) and M fixture workers on one shared store and one queue, as
 * separate processes; peers of any server act as the same principal.
 */
export class Cluster {
  readonly servers: HttpFixture[] = [];
  readonly peers: HttpPeer[] = [];
  readonly workers: WorkerProcess[] = [];
  readonly toolEvents = join(tempDir('mcp-tasks-dist-'), 'tool-events.jsonl');
  private nextWorker = 1;

  private constructor(readonly options: ClusterOptions) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options);
    try {
      for (let i = 0; i < (options.servers ?? 2); i++) await cluster.addServer();
      for (let i = 0; i < (options.workers ?? 2); i++) await cluster.addWorker();
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  get env(): Record<string, string> {
    return {
      MCP_TASKS_STORE: this.options.store,
      REDIS_URL: this.options.redisUrl,
      MCP_TASKS_QUEUE: this.options.queue,
      MCP_TASKS_EXECUTOR: 'queue',
      MCP_TASKS_TEST_TOKENS: TOKENS,
      MCP_TASKS_TOOL_EVENTS: this.toolEvents,
      ...this.options.env,
    };
  }

  async addServer(): Promise<HttpFixture> {
    const server = await HttpFixture.start({ env: this.env });
    this.servers.push(server);
    return server;
  }

  /** A new (uninitialised) peer of server `index`, acting as the tests' principal. */
  async peer(index: number): Promise<HttpPeer> {
    const peer = await (this.servers[index] as HttpFixture).peer({ authorization: `Bearer ${TOKEN}` });
    this.peers.push(peer);
    return peer;
  }

  async addWorker(env: Record<string, string> = {}): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start(`worker-${this.nextWorker++}`, { ...this.env, ...env });
    this.workers.push(worker);
    return worker;
  }

  /** The live workers. */
  get liveWorkers(): WorkerProcess[] {
    return this.workers.filter((worker) => worker.alive);
  }

  /** The worker that started the task's latest run (waits until one has). */
  async runnerOf(taskId: string, exclude: WorkerProcess[] = []): Promise<WorkerProcess> {
    return eventually(
      () => this.workers.find((worker) => !exclude.includes(worker) && worker.logged('task started', taskId)),
      20_000,
    );
  }

  /**
   * Waits until `probe` holds, up to `timeoutMs`; on timeout fails naming what the workers logged for the task, so a
   * failure says where its run stopped.
   */
  async awaitTask(taskId: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    try {
      await eventually(probe, timeoutMs);
    } catch (error) {
      throw new Error(`${String(error)} for task ${taskId}; the workers logged ${this.logsOf(taskId)}`);
    }
  }

  /** What each worker logged for the task, as JSON: for the message of a failed expectation. */
  logsOf(taskId: string): string {
    const logs = this.workers.map((worker) => ({
      worker: worker.name,
      logs: worker.logs.filter((line) => line.taskId === taskId),
    }));
    return JSON.stringify(logs);
  }

  workerWithPid(pid: number): WorkerProcess | undefined {
    return this.workers.find((worker) => worker.pid === pid);
  }

  readToolEvents(): ToolEvent[] {
    if (!existsSync(this.toolEvents)) return [];
    return readFileSync(this.toolEvents, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ToolEvent);
  }

  /** Tool events of the runs whose `label` argument is `label`. */
  toolEventsFor(label: string): ToolEvent[] {
    return this.readToolEvents().filter((event) => event.arguments['label'] === label);
  }

  async close(): Promise<void> {
    for (const peer of this.peers) await peer.close();
    await Promise.all(this.workers.map((worker) => worker.kill('SIGKILL')));
    // A server killed by a test has already exited; close() would wait for an exit that has happened.
    await Promise.all(
      this.servers.filter((server) => server.child.signalCode === null).map((server) => server.close()),
    );
  }

  /** Kills server `index` with SIGKILL. */
  async killServer(index: number): Promise<void> {
    const child = (this.servers[index] as HttpFixture).child;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
