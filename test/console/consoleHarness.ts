import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { McpServer } from '@modelcontextprotocol/server';
import { chromium, type BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import * as z from 'zod/v4';

import { TaskClient, type DialectPreference, type TaskHandle } from '../../src/client/index.js';
import type { ConsoleAuditRecord } from '../../src/console/ConsoleActions.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import type { TaskStore, TaskWork } from '../../src/engine/index.js';
import type { EventsOptions } from '../../src/events/index.js';
import { emitTaskEvent, withSteps } from '../../src/workflow/index.js';

export const CHROMIUM = '/usr/bin/chromium';
export const ADMIN_TOKEN = 'admin-token-for-tests';
export const READONLY_TOKEN = 'readonly-token-for-tests';
/** The harness engine's abortGraceMs. */
export const ABORT_GRACE_MS = 400;

/** Whether the browser suites run: Debian's chromium is required in CI (`.ci/run` installs it), optional elsewhere. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing; CI must install Debian's chromium`);
  console.warn(`Skipping the console browser tests: ${CHROMIUM} is missing (apt-get install chromium)`);
  return false;
}

/** Ends the `deaf` tool's call in progress. */
export const deafTool = { release: () => {} };
/** How long the `polite` tool takes to stop once told to. */
export const POLITE_STOP_MS = 150;

/** The event type the `emitter` tool emits (declared when the harness serves events). */
export const FINDING = 'com.example.finding';
export const FINDING_TYPE = {
  name: FINDING,
  description: 'A finding',
  payloadSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  tools: ['emitter'],
};

/** Whether the `flaky` tool fails. */
export const flaky = { failing: true };
/** Holds the `answered` tool between taking its answer and returning, until the test releases it. */
export const answeredTool = { release: () => {} };

/** A 1×1 PNG. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

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
  // A question with a field of every kind an answer form makes.
  server.registerTool('form', label, async ({ label: text }, ctx) => {
    const answer = await ctx.mcpReq.elicitInput({
      message: `Settings for ${text}?`,
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name', description: 'What to call it' },
          copies: { type: 'integer', title: 'Copies', minimum: 1, maximum: 10 },
          urgent: { type: 'boolean', title: 'Urgent' },
          size: { type: 'string', title: 'Size', enum: ['small', 'large'] },
        },
        required: ['name', 'copies'],
      },
    } as never);
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  });
  // Takes its answer, then returns only once the test lets it: the task is working, answered, for as long as needed.
  server.registerTool('answered', label, async ({ label: text }, ctx) => {
    const answer = await ctx.mcpReq.elicitInput({
      message: `Go ahead with ${text}?`,
      requestedSchema: { type: 'object', properties: { note: { type: 'string', title: 'Note' } } },
    } as never);
    await new Promise<void>((resolve) => {
      answeredTool.release = resolve;
      setTimeout(resolve, 60_000).unref();
    });
    return { content: [{ type: 'text', text: `${text}: ${JSON.stringify(answer)}` }] };
  });
  server.registerTool('sample', label, async ({ label: text }, ctx) => {
    const reply = await ctx.mcpReq.requestSampling({
      messages: [{ role: 'user', content: { type: 'text', text: `Summarise ${text}` } }],
      maxTokens: 100,
    });
    const content = reply.content as { type: string; text?: string };
    return { content: [{ type: 'text', text: `summary: ${content.text ?? ''}` }] };
  });
  // Ignores its abort signal: returns only once the test lets it (or after a minute).
  server.registerTool('deaf', label, async ({ label: text }) => {
    await new Promise<void>((resolve) => {
      deafTool.release = resolve;
      setTimeout(resolve, 60_000).unref();
    });
    return { content: [{ type: 'text', text: `done anyway ${text}` }] };
  });
  // Honours its abort signal, after cleaning up for POLITE_STOP_MS.
  server.registerTool('polite', label, async ({ label: text }, ctx) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10 * 60_000);
      ctx.mcpReq.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        setTimeout(resolve, POLITE_STOP_MS);
      });
    });
    return { content: [{ type: 'text', text: `stopped ${text}` }] };
  });
  // Emits FINDING events (the text of each is its label), then runs until cancelled.
  server.registerTool(
    'emitter',
    { inputSchema: z.object({ titles: z.array(z.string()) }) },
    async ({ titles }, ctx) => {
      for (const title of titles) await emitTaskEvent(ctx, FINDING, { title });
      await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener('abort', () => resolve()));
      return { content: [{ type: 'text', text: `emitted ${titles.length}` }] };
    },
  );
  // Named for the harness whose `work` ignores aborts (it replaces every tool's work there).
  server.registerTool('stubborn', label, async () => ({ content: [{ type: 'text', text: 'done' }] }));
  // Fails while `failing` holds (retry-safe: the console may run it again).
  server.registerTool('flaky', label, async ({ label: text }) => {
    if (flaky.failing) return { isError: true, content: [{ type: 'text', text: `could not reach ${text}` }] };
    return { content: [{ type: 'text', text: `reached ${text}` }] };
  });
  // A result a person reads: text with line breaks and markup, and an image.
  server.registerTool('report', label, async ({ label: text }) => ({
    content: [
      { type: 'text', text: `Report for ${text}\nline two <img src=x onerror="window.pwned=1"> <b>bold?</b>` },
      { type: 'image', mimeType: 'image/png', data: PIXEL_PNG },
    ],
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
  /**
   * A client speaking one generation; questions wait until `answerQuestions` is called, or for ever with
   * `{ answers: false }` (an operator answers them from the console).
   */
  client(dialect: DialectPreference, options?: { answers?: boolean }): Promise<TaskClient>;
  /** What the console audited. */
  audits: ConsoleAuditRecord[];
  answerQuestions(): void;
  browser(options?: { viewport?: { width: number; height: number } }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * A tasks server with the console mounted (admin and read-only tokens), its clients, and fresh browsers. `work`
 * replaces the tools' work for every task (as a proxy's does).
 */
export async function startConsoleHarness(
  options: { work?: () => TaskWork; store?: string | TaskStore; events?: EventsOptions } = {},
): Promise<ConsoleHarness> {
  const work = options.work;
  const tasks = await createMcpTasks({
    ...(work && { work: () => work() }),
    server: createServer,
    tools: {
      sleepy: 'optional',
      ask: 'optional',
      quick: 'optional',
      offering: 'optional',
      form: 'optional',
      sample: 'optional',
      answered: 'optional',
      stubborn: 'optional',
      flaky: { taskSupport: 'optional', retrySafe: true },
      report: 'optional',
      deaf: 'optional',
      polite: 'optional',
      emitter: 'optional',
    },
    ...(options.events && { events: options.events }),
    store: options.store ?? 'memory',
    metrics: true,
    // A run told to stop is flagged soon, so the tests see it.
    engine: { abortGraceMs: ABORT_GRACE_MS },
  });
  const audits: ConsoleAuditRecord[] = [];
  const http = await serveHttp(tasks, {
    port: 0,
    console: {
      path: '/console',
      token: ADMIN_TOKEN,
      readonlyToken: READONLY_TOKEN,
      refreshMs: 250,
      audit: (record) => audits.push(record),
    },
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
    audits,
    async client(dialect, options = {}) {
      const never = new Promise<never>(() => {});
      const client = await TaskClient.connect(
        { url: http.url },
        {
          dialect,
          elicitation: async () => {
            await (options.answers === false ? never : answered);
            return { action: 'accept', content: { colour: 'teal' } };
          },
          ...(options.answers === false && { sampling: () => never }),
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

/** The engine's id of a task: SEP-1686 requestors name theirs, which the store keeps as its idempotency key. */
export async function started(h: ConsoleHarness, handle: TaskHandle): Promise<string> {
  expect(await handle.accepted()).toBe(true);
  const wireId = handle.taskId as string;
  if (await h.tasks.engine.store.get(wireId)) return wireId;
  const all = (await h.tasks.engine.store.browse?.page({}, { limit: 1000, now: Date.now() })) ?? [];
  const found = all.find((record) => record.idempotencyKey === wireId);
  if (!found) throw new Error(`no stored task for ${wireId}`);
  return found.taskId;
}

/** Opens the console with `token` once (as the printed URL does); the page then runs on its cookie. */
export async function open(
  h: ConsoleHarness,
  token: string,
  options?: { viewport?: { width: number; height: number } },
) {
  const context = await h.browser(options);
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(`${h.consoleUrl}?token=${token}`);
  await page.waitForSelector('table[aria-label="Tasks"] tbody tr:not(.loading)');
  return { page, requests };
}
