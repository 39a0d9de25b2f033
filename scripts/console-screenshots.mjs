#!/usr/bin/env node
// Takes the console's screenshots in docs/images: a tasks server with the console, a few tasks of three owners (one
// refused at its concurrency cap), and Debian's chromium driven by playwright-core. Run after `npm run build`
// (`npm run docs:screenshots` does both). Each PNG must stay under MAX_BYTES: the page's size is chosen for that.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { McpServer } from '@modelcontextprotocol/server';
import { chromium } from 'playwright-core';
import * as z from 'zod/v4';

import { TaskClient } from '../dist/src/client/index.js';
import { createMcpTasks, serveHttp } from '../dist/src/server/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMAGES = join(ROOT, 'docs/images');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = 'screenshot-admin-token';
const MAX_BYTES = 80 * 1024;
// A 16×16 PNG: a blue square.
const SQUARE =
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAGElEQVR4nGNkaPjPQApgIkn1qIZRDcNKAwBnRQHw9r1cagAAAABJRU5ErkJggg==';

function createServer() {
  const server = new McpServer({ name: 'console-screenshots', version: '1.0.0' });
  const label = { inputSchema: z.object({ label: z.string() }) };
  server.registerTool('render', label, async ({ label: text }, ctx) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 10 * 60_000);
      ctx.mcpReq.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `rendered ${text}` }] };
  });
  server.registerTool('summarise', label, async ({ label: text }) => ({
    content: [
      {
        type: 'text',
        text: `Summary of ${text}\n\n- 14 pages read\n- 3 open questions\n- next review: Monday\n\nNothing here is parsed as HTML: <b>stays text</b>.`,
      },
      { type: 'image', mimeType: 'image/png', data: SQUARE },
    ],
  }));
  server.registerTool('publish', label, async ({ label: text }, ctx) => {
    const answer = await ctx.mcpReq.elicitInput({
      message: `Publish ${text}?`,
      requestedSchema: {
        type: 'object',
        properties: {
          channel: { type: 'string', title: 'Channel', enum: ['blog', 'newsletter'] },
          copies: { type: 'integer', title: 'Copies', minimum: 1, maximum: 10 },
          urgent: { type: 'boolean', title: 'Urgent' },
          note: { type: 'string', title: 'Note', description: 'Shown to the editor' },
        },
        required: ['channel', 'copies'],
      },
    });
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  });
  return server;
}

async function main() {
  const tasks = await createMcpTasks({
    server: createServer,
    tools: { render: 'optional', summarise: 'optional', publish: 'optional' },
    store: 'memory',
    // Low, so one owner is refused at it and the owners view shows a refusal.
    limits: { maxActivePerOwner: 3 },
  });
  const http = await serveHttp(tasks, { port: 0, console: { path: '/console', token: TOKEN, refreshMs: 500 } });
  const consoleUrl = `${new URL(http.url).origin}/console/`;
  const never = new Promise(() => {});
  const clients = [];
  const connect = async (dialect) => {
    const client = await TaskClient.connect({ url: http.url }, { dialect, elicitation: () => never });
    clients.push(client);
    return client;
  };
  const accepted = async (handle) => {
    if (!(await handle.accepted())) throw new Error('the server did not create a task');
    return handle;
  };

  const editors = await connect('2025-11-25');
  const summary = await accepted(await editors.callTool('summarise', { label: 'the quarterly report' }));
  await summary.outcome();
  const question = await accepted(await editors.callTool('publish', { label: 'the spring issue' }));
  const designers = await connect('ext-2026');
  for (const label of ['cover', 'poster', 'banner']) await accepted(await designers.callTool('render', { label }));
  // The fourth running task is over the owner's cap: refused, and counted.
  await designers.callTool('render', { label: 'flyer' }).catch(() => undefined);
  const readers = await connect('2025-11-25');
  for (const label of ['chapter 1', 'chapter 2', 'chapter 3']) {
    const handle = await accepted(await readers.callTool('summarise', { label }));
    await handle.outcome();
  }
  // The question is stored as asked once the task waits for input.
  for (let i = 0; i < 100 && (await tasks.engine.store.get(question.taskId))?.status !== 'input_required'; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));

  const profile = mkdtempSync(join(tmpdir(), 'mcp-tasks-screenshots-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    viewport: { width: 1100, height: 760 },
    colorScheme: 'light',
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${consoleUrl}?token=${TOKEN}`);
    await page.waitForSelector('tbody tr[data-task]');
    const shoot = async (name, clip) => {
      const path = join(IMAGES, name);
      await page.screenshot({ path, ...(clip && { clip }) });
      const { size } = statSync(path);
      console.log(`${name}: ${(size / 1024).toFixed(1)} KB`);
      if (size > MAX_BYTES) throw new Error(`${name} is ${size} bytes, over ${MAX_BYTES}`);
    };

    // The list's top: the overview and the first rows (a full page of rows would not fit in MAX_BYTES).
    await shoot('console-list.png', { x: 0, y: 0, width: 1100, height: 520 });

    await page.goto(`${consoleUrl}#/task/${encodeURIComponent(summary.taskId)}`);
    await page.locator('section.outcome pre.text').waitFor();
    await shoot('console-result.png');

    await page.goto(`${consoleUrl}#/task/${encodeURIComponent(question.taskId)}`);
    await page.locator('form.answer').waitFor();
    await page.selectOption('form.answer select', 'newsletter');
    await page.fill('form.answer input[type=number]', '2');
    await shoot('console-answer.png');

    await page.click('#cancel');
    await page.locator('dialog[open]').waitFor();
    // The dialog and a margin of the page behind it.
    const box = await page.locator('dialog[open]').boundingBox();
    const top = Math.max(0, Math.floor(box.y - 80));
    await shoot('console-cancel-confirm.png', { x: 0, y: top, width: 1100, height: Math.ceil(box.height + 160) });
    await page.click('#confirm-back');

    await page.goto(`${consoleUrl}#/owners`);
    await page.locator('tbody tr[data-owner] td.refused', { hasText: /^1 / }).waitFor();
    await page.locator('#queue-chart svg').waitFor();
    await shoot('console-owners.png');

    await page.setViewportSize({ width: 390, height: 760 });
    await page.goto(`${consoleUrl}#/`);
    await page.waitForSelector('tbody tr[data-task]');
    await shoot('console-phone.png');
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    for (const client of clients) await client.close().catch(() => {});
    await http.close();
    await tasks.close();
  }
}

await main();
