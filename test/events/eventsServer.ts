import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import type { TaskStore } from '../../src/engine/index.js';
import {
  createMcpTasks,
  serveHttp,
  type HttpServerHandle,
  type McpTasks,
  type McpTasksOptions,
} from '../../src/server/index.js';
import { emitTaskEvent, withSteps } from '../../src/workflow/index.js';
import type { EventsOptions } from '../../src/events/index.js';

export const STAGE = 'com.example.stage';
export const NOTE = 'com.example.note';

/**
 * Released by tests: a `staged` task emits its stages, then waits at its gate before it finishes. A gate opened
 * before its task arrives lets that task through when it does, so a test need not race the task to the gate.
 */
class Gates {
  private readonly waiting = new Map<string, () => void>();
  private readonly opened = new Set<string>();

  /** Whether a task waits at this gate now. */
  has(name: string): boolean {
    return this.waiting.has(name);
  }

  /** The gate's opener: releases the task waiting there, or the next one to arrive. */
  get(name: string): () => void {
    return () => {
      const release = this.waiting.get(name);
      this.waiting.delete(name);
      if (release) release();
      else this.opened.add(name);
    };
  }

  wait(name: string): Promise<void> {
    if (this.opened.delete(name)) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiting.set(name, resolve));
  }
}

export const gates = new Gates();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The tests' `authenticate` hook: any bearer token is a principal of that name; none is anonymous. */
export function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token ? { token, clientId: token, scopes: [] } : undefined;
}

/** A server whose tools emit events: `staged` (a plain handler) and `staged_workflow` (journaled step.emit). */
export function createEventsServer(): McpServer {
  const server = new McpServer({ name: 'events-test', version: '1.0.0' });
  server.registerTool(
    'staged',
    { inputSchema: z.object({ stages: z.number(), stageMs: z.number(), gate: z.string().optional() }) },
    async ({ stages, stageMs, gate }, ctx) => {
      for (let index = 0; index < stages; index++) {
        await sleep(stageMs);
        await emitTaskEvent(ctx, STAGE, { index, of: stages });
      }
      if (gate) await gates.wait(gate);
      return { content: [{ type: 'text', text: `${stages} stages` }] };
    },
  );
  server.registerTool('bad_emit', { inputSchema: z.object({}) }, async (_args, ctx) => {
    try {
      await emitTaskEvent(ctx, STAGE, { index: 'not a number' });
      return { content: [{ type: 'text', text: 'stored' }] };
    } catch (error) {
      return { content: [{ type: 'text', text: `refused: ${(error as Error).message}` }] };
    }
  });
  server.registerTool(
    'staged_workflow',
    { inputSchema: z.object({ stages: z.number() }) },
    withSteps<{ stages: number }>(async ({ stages }, step) => {
      for (let index = 0; index < stages; index++) {
        await step.emit(`stage-${index}`, STAGE, { index, of: stages });
        if (index === 0) await step.sleep('pause', 50);
      }
      return { content: [{ type: 'text', text: 'workflow done' }] };
    }),
  );
  return server;
}

export const EVENT_TYPES: EventsOptions['types'] = [
  {
    name: STAGE,
    description: 'A stage of the task finished',
    payloadSchema: {
      type: 'object',
      properties: { index: { type: 'integer', minimum: 0 }, of: { type: 'integer' } },
      required: ['index'],
    },
    tools: ['staged', 'staged_workflow'],
  },
  {
    name: NOTE,
    description: 'A note about the task',
    payloadSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

export interface EventsServer {
  tasks: McpTasks;
  http: HttpServerHandle;
  close(): Promise<void>;
}

/** The runtime with Events on `store`, served over HTTP on a free port. */
export async function startEventsServer(
  store: string | TaskStore,
  events: EventsOptions = {},
  extra: {
    authenticate?: (request: Request) => { token: string; clientId: string; scopes: string[] } | undefined;
    /** Where tasks run (default: in this process). */
    executor?: McpTasksOptions['executor'];
  } = {},
): Promise<EventsServer> {
  const tasks = await createMcpTasks({
    server: createEventsServer,
    tools: {
      staged: { taskSupport: 'optional', pollIntervalMs: 100 },
      bad_emit: { taskSupport: 'optional' },
      staged_workflow: { taskSupport: 'optional' },
    },
    store,
    events: { types: EVENT_TYPES, ...events },
    ...(extra.executor && { executor: extra.executor }),
  });
  const http = await serveHttp(tasks, {
    port: 0,
    ...(extra.authenticate && { authenticate: extra.authenticate as never }),
  });
  return {
    tasks,
    http,
    async close() {
      await http.close();
      await tasks.close();
    },
  };
}
