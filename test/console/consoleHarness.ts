import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { McpServer } from '@modelcontextprotocol/server';
import { chromium, type BrowserContext } from 'playwright-core';
import * as z from 'zod/v4';

import { TaskClient, type DialectPreference } from '../../src/client/index.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { withSteps } from '../../src/workflow/index.js';

export const CHROMIUM = '/usr/bin/chromium';
export const ADMIN_TOKEN = 'admin-token-for-tests';
export const READONLY_TOKEN = 'readonly-token-for-tests';

/** Whether the browser suites run: Debian's chromium is required in CI (`.ci/run` installs it), optional elsewhere. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing; CI must install Debian's chromium`);
  console.warn(`Skipping the console browser tests: ${CHROMIUM} is missing (apt-get install chromium)`);
  return false;
}

/** A standing offer's request, as `step.offer` takes it. */
function offerOf(message: string) {
  return { method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties: {} } } };
}

/**
 * Tools of the console tests: one that runs until cancelled, one that asks a question, one that ends at once, and a
 * workflow with three standing offers that sleeps until one is answered, takes the answer to `colour` and then runs
 * until cancelled.
 */
function createServer(): McpServer {
  const server = new McpServer({ name: 'console-tests', version: '1.0.0' });
  const label = { inputSchema: z.object({ label: z.string() }) };
  server.registerTool('sleepy', label, async ({ label: text }, ctx) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10 * 60_000);
      ctx.mcpReq.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `slept ${text}` }] };
  });
  server.registerTool('ask', label, async ({ label: text }, ctx) => {
    const answer = await ctx.mcpReq.elicitInput({
      message: `Which colour for ${text}?`,
      requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
    } as never);
    return { content: [{ type: 'text', text: `${text}: ${JSON.stringify(answer)}` }] };
  });
  server.registerTool('quick', label, async ({ label: text }) => ({
    content: [{ type: 'text', text: `done ${text}` }],
  }));
  server.registerTool(
    'offering',
    label,
    withSteps<{ label: string }>(async ({ label: text }, step) => {
      await step.offer('stop', offerOf(`Stop <b>${text}</b>?`));
      await step.offer('note', offerOf(`A note for ${text}?`));
      await step.offer('colour', offerOf(`Which colour for ${text}?`));
      await step.sleep('nap', '10m');
      const colour = await step.checkInput('check-colour', 'colour');
      await step.do('hold', ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', reject)));
      return { content: [{ type: 'text', text: JSON.stringify(colour) }] };
    }),
  );
  return server;
}

export interface ConsoleHarness {
  tasks: McpTasks;
  http: HttpServerHandle;
  /** `http://127.0.0.1:<port>/console/` */
  consoleUrl: string;
  /** A client speaking one generation; questions wait until `answerQuestions` is called. */
  client(dialect: DialectPreference): Promise<TaskClient>;
  answerQuestions(): void;
  browser(options?: { viewport?: { width: number; height: number } }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** A tasks server with the console mounted (admin and read-only tokens), its clients, and fresh browsers. */
export async function startConsoleHarness(): Promise<ConsoleHarness> {
  const tasks = await createMcpTasks({
    server: createServer,
    tools: { sleepy: 'optional', ask: 'optional', quick: 'optional', offering: 'optional' },
    store: 'memory',
  });
  const http = await serveHttp(tasks, createServer, {
    port: 0,
    console: { path: '/console', token: ADMIN_TOKEN, readonlyToken: READONLY_TOKEN, refreshMs: 250 },
  });
  const origin = new URL(http.url).origin;
  const clients: TaskClient[] = [];
  const contexts: BrowserContext[] = [];
  const dirs: string[] = [];
  let release: () => void = () => {};
  let answered = new Promise<void>((resolve) => (release = resolve));
  return {
    tasks,
    http,
    consoleUrl: `${origin}/console/`,
    async client(dialect) {
      const client = await TaskClient.connect(
        { url: http.url },
        {
          dialect,
          elicitation: async () => {
            await answered;
            return { action: 'accept', content: { colour: 'teal' } };
          },
        },
      );
      clients.push(client);
      return client;
    },
    answerQuestions() {
      release();
      answered = Promise.resolve();
    },
    async browser(options = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-chromium-'));
      dirs.push(dir);
      // A fresh profile per browser: nothing carried over, no network besides the console.
      const context = await chromium.launchPersistentContext(dir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
        viewport: options.viewport ?? { width: 1280, height: 900 },
      });
      contexts.push(context);
      return context;
    },
    async close() {
      release();
      for (const context of contexts) await context.close().catch(() => {});
      for (const client of clients) await client.close().catch(() => {});
      await http.close();
      await tasks.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
