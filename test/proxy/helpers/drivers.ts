import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type TaskOutcome as ExtOutcome,
} from '@modelcontextprotocol/ext-tasks/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { TaskClient, textOf, type TaskOutcome } from '../../../src/client/index.js';
import { fetchRawDispatch } from '../../interop/helpers/fetchRawDispatch.js';
import { CLI } from './proxyProcess.js';

/**
 * The requestors the gateway is driven by, behind one interface so a scenario runs with each of them: the project's
 * TaskClient in all three generations, the SDK 1.32 client (`callToolStream`, 2025-11-25), the official ext-tasks
 * requestor in its 2025-11-25 and 2026-07-28 modes, and the mcp-tasks command line.
 */

export interface DriverOutcome {
  status: 'completed' | 'failed' | 'cancelled';
  /** The result's text, or the failure's message. */
  text: string;
  statusMessage?: string;
}

export interface DriverCall {
  taskId: string;
  /** Waits for the task's end on the connection that created it. */
  outcome(): Promise<DriverOutcome>;
  /** What this requestor keeps to find the task again (ext-tasks' serialized reference). */
  reference?: SerializedTaskReference;
}

export interface Driver {
  readonly name: string;
  /** Calls a tool as a task through the gateway; resolves once the task exists. */
  call(tool: string, args: Record<string, unknown>): Promise<DriverCall>;
  /** The task's outcome over a new connection (after a restart of the gateway, say). */
  follow(call: DriverCall): Promise<DriverOutcome>;
  close(): Promise<void>;
}

export interface DriverTarget {
  /** The gateway's URL now (it changes when the gateway is restarted on port 0). */
  url(): string;
  headers?: Record<string, string>;
}

const SETTLE_MS = 60_000;

/** One connection per gateway URL for calls (a restarted gateway has a new URL); follow-ups open their own. */
function reused<T>(open: () => Promise<T>, url: () => string): () => Promise<T> {
  let current: { url: string; connection: Promise<T> } | undefined;
  return () => {
    if (current?.url !== url()) current = { url: url(), connection: open() };
    return current.connection;
  };
}
const CLIENT_INFO = { name: 'gateway-test', version: '1.0.0' };

function fromTaskClient(outcome: TaskOutcome): DriverOutcome {
  const statusMessage = outcome.snapshot.statusMessage;
  const common = statusMessage === undefined ? {} : { statusMessage };
  if (outcome.status === 'completed') return { status: 'completed', text: textOf(outcome.result), ...common };
  if (outcome.status === 'failed') return { status: 'failed', text: outcome.message, ...common };
  return { status: 'cancelled', text: outcome.message ?? '', ...common };
}

/** The project's TaskClient speaking one generation. */
export function taskClientDriver(dialect: '2025-11-25' | 'ext-2026' | 'sep-1686', target: DriverTarget): Driver {
  const clients: TaskClient[] = [];
  const connect = async () => {
    const client = await TaskClient.connect(
      { url: target.url(), ...(target.headers && { headers: target.headers }) },
      { dialect, elicitation: () => new Promise<never>(() => {}) },
    );
    clients.push(client);
    return client;
  };
  const caller = reused(connect, target.url);
  return {
    name: `TaskClient ${dialect}`,
    async call(tool, args) {
      const handle = await (await caller()).callTool(tool, args);
      if (!(await handle.accepted())) throw new Error(`${tool} did not become a task`);
      return { taskId: handle.taskId as string, outcome: async () => fromTaskClient(await handle.outcome()) };
    },
    async follow(call) {
      return fromTaskClient(await (await (await connect()).attach(call.taskId)).outcome());
    },
    async close() {
      for (const client of clients.splice(0)) await client.close().catch(() => {});
    },
  };
}

type StreamMessage =
  | { type: 'taskCreated'; task: { taskId: string } }
  | { type: 'taskStatus'; task: { status: string; statusMessage?: string } }
  | { type: 'result'; result: { content: Array<{ text?: string }>; isError?: boolean } }
  | { type: 'error'; error: Error };

/** The SDK 1.32 client: `experimental.tasks.callToolStream`, and getTask/getTaskResult on a new connection. */
export function sdk132Driver(target: DriverTarget): Driver {
  const clients: V1Client[] = [];
  const connect = async () => {
    const client = new V1Client(CLIENT_INFO);
    const transport = new V1HttpTransport(new URL(target.url()), {
      ...(target.headers && { requestInit: { headers: target.headers } }),
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const text = (result: { content: Array<{ text?: string }> }) => result.content.map((c) => c.text ?? '').join('\n');
  const caller = reused(connect, target.url);
  return {
    name: 'SDK 1.32 callToolStream',
    async call(tool, args) {
      const client = await caller();
      const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: args }, undefined, {
        task: { ttl: 300_000 },
      }) as AsyncGenerator<StreamMessage>;
      const first = await stream.next();
      if (first.done || first.value.type !== 'taskCreated')
        throw new Error(`callToolStream began with ${JSON.stringify(first.value)}`);
      const taskId = first.value.task.taskId;
      return {
        taskId,
        async outcome() {
          let statusMessage: string | undefined;
          let status = 'working';
          for await (const message of stream) {
            if (message.type === 'taskStatus') {
              status = message.task.status;
              statusMessage = message.task.statusMessage ?? statusMessage;
            }
            const common = statusMessage === undefined ? {} : { statusMessage };
            if (message.type === 'result') {
              const failed = message.result.isError === true || status === 'failed';
              return { status: failed ? 'failed' : 'completed', text: text(message.result), ...common };
            }
            if (message.type === 'error')
              return {
                status: status === 'cancelled' ? 'cancelled' : 'failed',
                text: message.error.message,
                ...common,
              };
          }
          throw new Error('callToolStream ended without a result');
        },
      };
    },
    async follow(call) {
      const client = await connect();
      const deadline = Date.now() + SETTLE_MS;
      for (;;) {
        const task = await client.experimental.tasks.getTask(call.taskId);
        const common = task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage };
        if (task.status === 'completed') {
          const result = await client.experimental.tasks.getTaskResult(call.taskId, CallToolResultSchema);
          return { status: 'completed', text: text(result as never), ...common };
        }
        if (task.status === 'failed' || task.status === 'cancelled')
          return { status: task.status, text: task.statusMessage ?? '', ...common };
        if (Date.now() > deadline) throw new Error(`task ${call.taskId} still ${task.status}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async close() {
      for (const client of clients.splice(0)) await client.close().catch(() => {});
    },
  };
}

type ExtResult = { content: Array<{ text?: string }>; isError?: boolean };

function fromExtTasks(outcome: ExtOutcome<ExtResult>): DriverOutcome {
  const statusMessage = outcome.task?.statusMessage;
  const common = statusMessage === undefined ? {} : { statusMessage };
  if (outcome.status === 'completed')
    return { status: 'completed', text: outcome.result.content.map((c) => c.text ?? '').join('\n'), ...common };
  if (outcome.status === 'failed') return { status: 'failed', text: outcome.error.message, ...common };
  return { status: 'cancelled', text: '', ...common };
}

/** `@modelcontextprotocol/ext-tasks` on the SDK v2 client, in its 2025-11-25 (v1) or 2026-07-28 (v2) mode. */
export function extTasksDriver(generation: 'v1' | 'v2', target: DriverTarget): Driver {
  const opened: Array<{ client: V2Client; session: TaskEnabledSession }> = [];
  const headers = target.headers ?? {};
  const connect = async () => {
    const url = target.url();
    const client = new V2Client(CLIENT_INFO, {
      capabilities: {},
      ...(generation === 'v2' && { versionNegotiation: { mode: 'auto' as const } }),
    });
    await client.connect(new V2HttpTransport(new URL(url), { requestInit: { headers } }));
    const session =
      generation === 'v1'
        ? createTaskSessionFromClient(client, { endpointId: 'gateway' })
        : createTaskSessionFromClient(client, {
            endpointId: 'gateway',
            // The SDK client's 2026 codecs cannot carry task results: ext-tasks sends those through raw dispatch.
            rawDispatch: fetchRawDispatch(url).dispatch,
            v2RequestFraming: {
              protocolVersion: client.getNegotiatedProtocolVersion() as string,
              clientInfo: CLIENT_INFO,
              clientCapabilities: {},
            },
          });
    opened.push({ client, session });
    return session;
  };
  const caller = reused(connect, target.url);
  return {
    name: `ext-tasks ${generation === 'v1' ? '2025-11-25' : '2026-07-28'}`,
    async call(tool, args) {
      const session = await caller();
      const execution = await session.callTool<ExtResult>(tool, args as never, {
        task: { preference: 'require' },
        headers,
      });
      if (execution.kind !== 'task') throw new Error(`${tool} did not become a task`);
      return {
        taskId: execution.handle.taskId,
        reference: execution.serializeReference(),
        outcome: async () => fromExtTasks((await execution.settle({ signal: AbortSignal.timeout(SETTLE_MS) })).outcome),
      };
    },
    async follow(call) {
      const session = await connect();
      const execution = await session.resumeTask<ExtResult>(call.reference as SerializedTaskReference, { headers });
      return fromExtTasks((await execution.settle({ signal: AbortSignal.timeout(SETTLE_MS) })).outcome);
    },
    async close() {
      for (const { client, session } of opened.splice(0)) {
        await session.close().catch(() => {});
        await client.close().catch(() => {});
      }
    },
  };
}

/** The `mcp-tasks` command line: `call --detach`, then `result <id>`. */
export function cliDriver(target: DriverTarget): Driver {
  const run = async (args: string[]): Promise<Array<Record<string, unknown>>> => {
    const headerArgs = Object.entries(target.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [CLI, '--url', target.url(), ...headerArgs, '--no-store', '--json', ...args],
      { timeout: SETTLE_MS },
    ).catch((error: { stdout?: string }) => {
      // A task that ended failed exits non-zero; its JSON lines are still the answer.
      if (typeof error.stdout === 'string' && error.stdout.length > 0) return { stdout: error.stdout };
      throw error;
    });
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };
  const result = async (taskId: string): Promise<DriverOutcome> => {
    const lines = await run(['result', taskId]);
    const outcome = lines.find((line) => line['type'] === 'outcome') as
      | { status: DriverOutcome['status']; message?: string; result?: unknown; snapshot: { statusMessage?: string } }
      | undefined;
    if (!outcome) throw new Error(`mcp-tasks result printed no outcome: ${JSON.stringify(lines)}`);
    const statusMessage = outcome.snapshot.statusMessage;
    return {
      status: outcome.status,
      text: outcome.result === undefined ? (outcome.message ?? '') : textOf(outcome.result as never),
      ...(statusMessage !== undefined && { statusMessage }),
    };
  };
  return {
    name: 'mcp-tasks CLI',
    async call(tool, args) {
      const lines = await run(['call', tool, '--args', JSON.stringify(args), '--mode', 'task', '--detach']);
      const detached = lines.find((line) => line['type'] === 'detached');
      if (typeof detached?.['taskId'] !== 'string') throw new Error(`no task id in ${JSON.stringify(lines)}`);
      const taskId = detached['taskId'];
      return { taskId, outcome: () => result(taskId) };
    },
    follow: (call) => result(call.taskId),
    async close() {},
  };
}

/** Every requestor, against one gateway. */
export function allDrivers(target: DriverTarget): Driver[] {
  return [
    taskClientDriver('2025-11-25', target),
    taskClientDriver('ext-2026', target),
    taskClientDriver('sep-1686', target),
    sdk132Driver(target),
    extTasksDriver('v1', target),
    extTasksDriver('v2', target),
    cliDriver(target),
  ];
}
