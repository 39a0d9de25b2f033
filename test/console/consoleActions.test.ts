import { readFileSync } from 'node:fs';

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TaskWork } from '../../src/engine/index.js';
import {
  ABORT_GRACE_MS,
  ADMIN_TOKEN,
  answeredTool,
  chromiumAvailable,
  flaky,
  open,
  READONLY_TOKEN,
  started,
  startConsoleHarness,
  type ConsoleHarness,
} from './consoleHarness.js';

/**
 * What an operator does in the console, in real Chromium over a server whose tasks are created over MCP: answer a
 * waiting task's question, re-run a failed task, cancel several at once, export the list, read a result.
 */
const available = chromiumAvailable();

describe.skipIf(!available)('acting from the console in Chromium', () => {
  let h: ConsoleHarness;
  let page: Page;

  beforeAll(async () => {
    h = await startConsoleHarness();
    ({ page } = await open(h, ADMIN_TOKEN, { viewport: { width: 1400, height: 900 } }));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const timelineEntry = (kind: string, text: string | RegExp) =>
    page.locator(`ol.timeline li[data-kind="${kind}"]`, { hasText: text }).waitFor();
  const api = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${h.consoleUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${init.token ?? ADMIN_TOKEN}`, ...(init.headers as Record<string, string>) },
    });

  it('answers an elicitation from a form made from its schema; the waiting tool gets it and the task goes on', async () => {
    const client = await h.client('2025-11-25', { answers: false });
    const handle = await client.callTool('form', { label: 'the poster' });
    const taskId = await started(h, handle);
    await page.goto(`${h.consoleUrl}#/task/${taskId}`);
    const form = page.locator('form.answer');
    await form.waitFor();
    await page.getByLabel('Name (required)').fill('Ada <b>Lovelace</b>');
    await page.getByLabel('Copies (required)').fill('3');
    await page.getByLabel('Urgent').check();
    await page.getByLabel('Size').selectOption('large');

    // The read-only token sees the question and cannot answer it; an admin request without the page's header neither.
    const body = JSON.stringify({ key: 'x', action: 'decline' });
    const json = { 'content-type': 'application/json', 'x-console-request': '1' };
    const readonly = await api(`api/tasks/${taskId}/answer`, {
      method: 'POST',
      body,
      headers: json,
      token: READONLY_TOKEN,
    });
    expect(readonly.status).toBe(403);
    const foreign = await api(`api/tasks/${taskId}/answer`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(foreign.status).toBe(403);
    const key = Object.keys((await h.tasks.engine.store.get(taskId))?.inputRequests ?? {})[0] as string;
    // An answer that does not fit the schema is refused with the reason, and nothing is answered.
    for (const [content, reason] of [
      [{ name: 'x' }, 'copies is required'],
      [{ name: 'x', copies: 11 }, 'copies must be ≤ 10'],
      [{ name: 'x', copies: 1, size: 'huge' }, 'size must be one of small, large'],
      [{ name: 'x', copies: 1, admin: true }, 'the question has no field admin'],
    ] as const) {
      const refused = await api(`api/tasks/${taskId}/answer`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ key, action: 'accept', content }),
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: reason });
    }
    expect((await h.tasks.engine.store.get(taskId))?.status).toBe('input_required');

    await form.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('h1 + p .status.completed').waitFor();
    const outcome = await handle.outcome();
    expect(outcome.status).toBe('completed');
    const text = JSON.stringify(outcome);
    const expected = {
      action: 'accept',
      content: { name: 'Ada <b>Lovelace</b>', copies: 3, urgent: true, size: 'large' },
    };
    expect(text).toContain(JSON.stringify(JSON.stringify(expected)).slice(1, -1));
    await timelineEntry('operator', `accepted question ${key} (by console admin)`);
    expect(h.audits).toContainEqual(expect.objectContaining({ action: 'answer', taskId, detail: `${key} (accept)` }));
    // The result is the tool's text, shown as text: the operator's markup stays characters.
    expect(await page.locator('.outcome pre.text').first().textContent()).toContain('Ada <b>Lovelace</b>');
    expect(await page.locator('.outcome b').count()).toBe(0);
  });

  it('answers a sampling request with a text', async () => {
    const client = await h.client('ext-2026', { answers: false });
    const handle = await client.callTool('sample', { label: 'the minutes' });
    const taskId = await started(h, handle);
    await page.goto(`${h.consoleUrl}#/task/${taskId}`);
    await page.locator('form.answer ol.messages', { hasText: 'Summarise the minutes' }).waitFor();
    await page.getByLabel('The reply the work receives (as the assistant)').fill('Nothing was decided.');
    // Escape while typing stays on the page (elsewhere it goes back to the list).
    await page.keyboard.press('Escape');
    expect(page.url()).toContain(`#/task/${taskId}`);
    await page.locator('form.answer').getByRole('button', { name: 'Send answer' }).click();
    await page.locator('h1 + p .status.completed').waitFor();
    expect(JSON.stringify(await handle.outcome())).toContain('summary: Nothing was decided.');
    await timelineEntry('operator', /answered question .* with a text \(by console admin\)/);
  });

  it("keeps the live view's newer state when the answer's reply arrives after it", async () => {
    const client = await h.client('2025-11-25', { answers: false });
    const handle = await client.callTool('answered', { label: 'the release' });
    const taskId = await started(h, handle);
    await page.goto(`${h.consoleUrl}#/task/${taskId}`);
    await page.locator('form.answer').waitFor();
    // The reply is read once the answer is taken (the task working); hold it until the stream has drawn the end.
    let deliver = () => {};
    const delivered = new Promise<void>((resolve) => (deliver = resolve));
    let replyStatus: string | undefined;
    await page.route('**/answer', async (route) => {
      const response = await route.fetch();
      replyStatus = ((await response.json()) as { task: { status: string } }).task.status;
      await delivered;
      await route.fulfill({ response });
    });
    try {
      await page.getByLabel('Note').fill('ship it');
      await page.locator('form.answer').getByRole('button', { name: 'Send answer' }).click();
      await expect.poll(() => replyStatus).toBe('working');
      answeredTool.release();
      expect((await handle.outcome()).status).toBe('completed');
      await page.locator('h1 + p .status.completed').waitFor();
      deliver();
      await page.locator('#live', { hasText: 'answer sent' }).waitFor();
      // The stream sends a view only when it changes: the older reply drawn now would stay for good.
      expect(await page.locator('h1 + p .status').getAttribute('class')).toBe('status completed');
    } finally {
      deliver();
      await page.unroute('**/answer');
    }
  });

  it('re-runs a failed retry-safe task as a new task of the same owner, linked both ways', async () => {
    flaky.failing = true;
    const client = await h.client('2025-11-25');
    const handle = await client.callTool('flaky', { label: 'the mirror' });
    const failedId = await started(h, handle);
    expect((await handle.outcome()).status).toBe('failed');
    const original = await h.tasks.engine.store.get(failedId);

    // A task whose tool is not retry-safe offers no re-run, and the API refuses it.
    const quick = await started(h, await client.callTool('quick', { label: 'once' }));
    await page.goto(`${h.consoleUrl}#/task/${quick}`);
    await page.locator('h1 + p .status.completed').waitFor();
    expect(await page.locator('#rerun').count()).toBe(0);
    const refused = await api(`api/tasks/${quick}/rerun`, { method: 'POST', headers: { 'x-console-request': '1' } });
    expect(refused.status).toBe(409);

    await page.goto(`${h.consoleUrl}#/task/${failedId}`);
    await page.locator('.outcome pre.text', { hasText: 'could not reach the mirror' }).waitFor();
    flaky.failing = false;
    await page.click('#rerun');
    await page.locator('dialog[open]', { hasText: 'Re-run this task?' }).waitFor();
    await page.click('#confirm-cancel');
    await page.waitForURL((url) => url.hash.startsWith('#/task/') && !url.hash.includes(failedId));
    const rerunId = decodeURIComponent(new URL(page.url()).hash.slice('#/task/'.length));
    await page.locator('h1 + p .status.completed').waitFor();
    await page.locator('.outcome pre.text', { hasText: 'reached the mirror' }).waitFor();
    await timelineEntry('rerun', `re-run of ${failedId} by console admin`);
    const rerun = await h.tasks.engine.store.get(rerunId);
    expect(rerun?.owner).toBe(original?.owner);
    expect(rerun?.request.params['arguments']).toEqual({ label: 'the mirror' });
    // The original links forward, and the link opens the re-run.
    await page.goto(`${h.consoleUrl}#/task/${failedId}`);
    await timelineEntry('rerun', `re-run as ${rerunId} by console admin`);
    expect(h.audits).toContainEqual(expect.objectContaining({ action: 'rerun', taskId: failedId, detail: rerunId }));
  });

  it('cancels the selected tasks after one confirmation that names their count', async () => {
    const client = await h.client('2025-11-25');
    const handles = await Promise.all(['a', 'b', 'c'].map((n) => client.callTool('sleepy', { label: `bulk-${n}` })));
    const ids = await Promise.all(handles.map((handle) => started(h, handle)));
    await page.goto(`${h.consoleUrl}#/?tool=sleepy&status=working`);
    for (const id of ids) await page.locator(`input[data-pick="${id}"]`).check();
    await page.locator('#bulk-cancel', { hasText: 'Cancel 3 selected…' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('h2', { hasText: 'Cancel 3 tasks?' }).waitFor();
    // Backing out changes nothing.
    await page.keyboard.press('Escape');
    for (const id of ids) expect((await h.tasks.engine.store.get(id))?.status).toBe('working');
    await page.click('#bulk-cancel');
    await page.click('#confirm-cancel');
    for (const handle of handles) expect((await handle.outcome()).status).toBe('cancelled');
    await page.locator('#bulk-result', { hasText: 'Cancelled 3 tasks.' }).waitFor();
    // Once over, they cannot be ticked any more; a bulk cancel of finished tasks skips them with the reason.
    await expect.poll(() => page.locator('input[data-pick]').count()).toBe(0);
    const again = await api('api/cancel', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-console-request': '1' },
      body: JSON.stringify({ taskIds: ids.slice(0, 1) }),
    });
    expect(await again.json()).toEqual({
      cancelled: [],
      skipped: [{ taskId: ids[0], reason: 'the task is already cancelled' }],
    });
    const tooMany = await api('api/cancel', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-console-request': '1' },
      body: JSON.stringify({ taskIds: Array.from({ length: 101 }, (_, i) => `t${i}`) }),
    });
    expect(tooMany.status).toBe(400);
  });

  it('exports the current filter as CSV from the page and as JSON lines', async () => {
    const client = await h.client('2025-11-25');
    for (const label of ['=1+1', 'plain, with "quotes"']) await (await client.callTool('quick', { label })).outcome();
    await page.goto(`${h.consoleUrl}#/?tool=quick`);
    await page.locator('tbody tr[data-task]').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    expect(download.suggestedFilename()).toMatch(/^mcp-tasks-.*\.csv$/);
    const csv = readFileSync((await download.path()) as string, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe('taskId,tool,owner,generation,status,statusMessage,createdAt,terminalAt,durationMs,attempts');
    const rows = csv.slice(1);
    const stored = (await h.tasks.engine.store.browse?.page({}, { limit: 1000, now: Date.now() })) ?? [];
    const quick = stored.filter((record) => record.request.params['name'] === 'quick');
    expect(rows).toHaveLength(quick.length);
    expect(rows.every((line) => line.includes(',quick,'))).toBe(true);

    const lines = (await (await api('api/export?tool=quick&format=jsonl')).text()).trim().split('\n');
    const tasks = lines.map((line) => JSON.parse(line) as { taskId: string; tool: string });
    expect(new Set(tasks.map((task) => task.taskId))).toEqual(new Set(quick.map((record) => record.taskId)));
    expect((await api('api/export?format=xml')).status).toBe(400);
  });

  it('shows a result as a person reads it: text as text, images as images, ids copied with a click', async () => {
    const client = await h.client('2025-11-25');
    const handle = await client.callTool('report', { label: 'March' });
    const taskId = await started(h, handle);
    await handle.outcome();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto(`${h.consoleUrl}#/task/${taskId}`);
    const text = page.locator('.outcome pre.text').first();
    await text.waitFor();
    // The line break is a line break, the markup characters; nothing of it ran.
    expect(await text.textContent()).toBe(
      'Report for March\nline two <img src=x onerror="window.pwned=1"> <b>bold?</b>',
    );
    expect(await text.evaluate((node) => node.getBoundingClientRect().height > 30)).toBe(true);
    expect(await page.locator('.outcome .content-text img, .outcome .content-text b').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    const image = page.locator('img.content-image');
    await expect
      .poll(() => image.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(1);
    // The raw result is there, folded away.
    expect(await page.locator('.outcome details.json:not([open]) summary', { hasText: 'Raw result' }).count()).toBe(1);
    await page.locator('h1 button.copy').click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(taskId);
  });

  it('fits at least 15 compact rows above the fold at 1400×900, with a time axis on the chart', async () => {
    const client = await h.client('2025-11-25');
    for (let i = 0; i < 16; i++) await (await client.callTool('quick', { label: `row ${i}` })).outcome();
    await page.goto(`${h.consoleUrl}#/`);
    await expect.poll(() => page.locator('tbody tr[data-task]').count()).toBeGreaterThanOrEqual(16);
    const visible = await page
      .locator('tbody tr[data-task]')
      .evaluateAll(
        (rows) =>
          rows.filter(
            (row) =>
              row.getBoundingClientRect().bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight,
          ).length,
      );
    expect(visible).toBeGreaterThanOrEqual(15);
    // Short ids, the whole on hover.
    const first = page.locator('tbody tr[data-task] td.id a').first();
    const full = (await first.getAttribute('title')) as string;
    expect(full.length).toBe(36);
    expect((await first.textContent())?.length).toBeLessThan(12);
    const axis = await page.locator('.axis span').allTextContents();
    expect(axis).toHaveLength(5);
    expect(axis[4]).toBe('now');
  });

  it("shows each owner's load, and opens an owner's tasks", async () => {
    const client = await h.client('ext-2026');
    const handle = await client.callTool('sleepy', { label: 'owner load' });
    const taskId = await started(h, handle);
    const owner = (await h.tasks.engine.store.get(taskId))?.owner as string;
    await page.goto(`${h.consoleUrl}#/`);
    await page.click('#nav-owners');
    const row = page.locator(`tr[data-owner="${owner}"]`);
    await row.waitFor();
    const stored = (await h.tasks.engine.store.browse?.page({ owner }, { limit: 1000, now: Date.now() })) ?? [];
    const count = (status: string) => String(stored.filter((record) => record.status === status).length);
    expect(count('working')).toBe('1');
    // The bytes its stored tasks take, as the store counts them for its byte cap, and no refusal.
    const bytes = (await h.tasks.engine.store.storedBytesOf?.(owner)) as number;
    expect(bytes).toBeGreaterThan(0);
    await expect
      .poll(() => row.locator('td').allTextContents())
      .toEqual([`${owner}copy`, '1', count('input_required'), String(stored.length), expect.any(String), '0', 'tasks']);
    expect(await row.locator('td.bytes').getAttribute('title')).toBe(`${bytes} bytes`);
    expect(await row.locator('td.bytes').textContent()).toMatch(/^\d+(\.\d)? (B|KiB)$/);
    // The queue's depth over the last hour: a reading of the in-process executor, on a time axis ending now.
    await page.locator('#queue-chart svg rect.waiting').first().waitFor();
    const axis = await page.locator('#queue-chart .axis span').allTextContents();
    expect(axis).toHaveLength(5);
    expect(axis[4]).toBe('now');
    expect(await page.locator('#queue-chart rect.waiting title').first().textContent()).toMatch(
      /\d+ waiting, \d+ running$/,
    );
    await row.getByRole('link', { name: 'tasks' }).click();
    await expect
      .poll(() =>
        page.locator('tbody tr[data-task]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task'))),
      )
      .toEqual(stored.map((record) => record.taskId));
    expect(await page.inputValue('input[name="owner"]')).toBe(owner);
    await handle.cancel();
  });
});

/** Work that does not stop when told to: it returns once the test lets it (a proxy's upstream may take as long). */
const deafGate = { release: () => {} };
const deaf = (): TaskWork => () =>
  new Promise((resolve) => {
    const done = () => resolve({ kind: 'result', result: { content: [{ type: 'text', text: 'done anyway' }] } });
    deafGate.release = done;
    setTimeout(done, 60_000).unref();
  });

describe.skipIf(!available)('a console over work that ignores aborts, from empty', () => {
  let h: ConsoleHarness;
  beforeAll(async () => {
    h = await startConsoleHarness({ work: deaf });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('says it is loading, then how to create a task', async () => {
    const context = await h.browser();
    const page = await context.newPage();
    // The list's first data is held back until the loading state was seen.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/stream?*', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${h.consoleUrl}?token=${ADMIN_TOKEN}`);
    await page.locator('tbody tr.loading', { hasText: 'Loading tasks…' }).waitFor();
    expect(await page.locator('table[aria-busy="true"]').count()).toBe(1);
    release();
    await page.locator('td.empty', { hasText: 'No tasks yet.' }).waitFor();
    expect(await page.locator('td.empty code').textContent()).toContain('call <tool>');
    // A filter that matches nothing says so instead, and offers to clear it.
    await page.goto(`${h.consoleUrl}#/?tool=nothing`);
    await page.locator('td.empty', { hasText: 'No tasks match these filters.' }).waitFor();
  });

  it('shows when a cancelled task whose work ignores the abort really stopped', async () => {
    const client = await h.client('2025-11-25');
    const handle = await client.callTool('stubborn', { label: 'ignored' });
    const taskId = await started(h, handle);
    const page = await (await h.browser()).newPage();
    await page.goto(`${h.consoleUrl}?token=${ADMIN_TOKEN}#/task/${taskId}`);
    const timelineEntry = (kind: string, text: string | RegExp) =>
      page.locator(`ol.timeline li[data-kind="${kind}"]`, { hasText: text }).waitFor();
    await page.click('#cancel');
    await page.click('#confirm-cancel');
    const cancelledAt = Date.now();
    await timelineEntry('run_overdue', 'still running 0.4 s after it was told to stop: the work ignores the abort');
    // Flagged within the grace period (and a margin for a loaded machine), while the work still runs.
    expect(Date.now() - cancelledAt).toBeLessThan(ABORT_GRACE_MS + 2000);
    await page.waitForTimeout(500);
    deafGate.release();
    await timelineEntry('run_ended', /run 1 stopped \d{3,} ms after it was told to stop/);
    expect((await handle.outcome()).status).toBe('cancelled');
  });
});
