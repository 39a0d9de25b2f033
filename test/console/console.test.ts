import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TaskHandle } from '../../src/client/index.js';
import {
  ADMIN_TOKEN,
  chromiumAvailable,
  open,
  READONLY_TOKEN,
  started,
  startConsoleHarness,
  type ConsoleHarness,
} from './consoleHarness.js';

/**
 * The console in real Chromium (Debian's package, driven by playwright-core) over a server whose tasks are created
 * over MCP in each generation.
 */
const available = chromiumAvailable();

const row = (page: Page, taskId: string) => page.locator(`tr[data-task="${taskId}"]`);

async function statusOf(page: Page, taskId: string, status: string): Promise<void> {
  await row(page, taskId).locator(`.status.${status}`).waitFor();
}

describe.skipIf(!available)('the task console in Chromium', () => {
  let h: ConsoleHarness;
  const ids: Record<string, string> = {};
  const handles: Record<string, TaskHandle> = {};

  beforeAll(async () => {
    h = await startConsoleHarness();
    const core = await h.client('2025-11-25');
    const ext = await h.client('ext-2026');
    const sep = await h.client('sep-1686');
    for (const [name, client] of [
      ['core', core],
      ['ext', ext],
      ['sep', sep],
    ] as const) {
      handles[name] = await client.callTool('sleepy', { label: `${name}-sleeper` });
      ids[name] = await started(h, handles[name]);
    }
    handles['quick'] = await core.callTool('quick', { label: 'finished-quickly' });
    ids['quick'] = await started(h, handles['quick']);
    await handles['quick'].outcome();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('answers 401 without a token (or with a wrong one) and reveals nothing', async () => {
    for (const path of ['', 'app.js', 'api/tasks', `api/tasks/${ids['core']}`, 'api/stream', '?token=wrong']) {
      const response = await fetch(`${h.consoleUrl}${path}`);
      expect(response.status, path).toBe(401);
      expect(await response.text()).toBe('Unauthorized');
    }
    const cancel = await fetch(`${h.consoleUrl}api/tasks/${ids['core']}/cancel`, {
      method: 'POST',
      headers: { 'x-console-request': '1', authorization: 'Bearer wrong' },
    });
    expect(cancel.status).toBe(401);
    const context = await h.browser();
    const page = await context.newPage();
    const response = await page.goto(h.consoleUrl);
    expect(response?.status()).toBe(401);
    expect(await page.textContent('body')).toBe('Unauthorized');
    expect((await h.tasks.engine.store.get(ids['core'] as string))?.status).toBe('working');
  });

  it('lists the tasks of all three generations and follows them live, loading nothing from elsewhere', async () => {
    const { page, requests } = await open(h, ADMIN_TOKEN);
    // The token went into an HttpOnly cookie and out of the address bar.
    expect(page.url()).toBe(h.consoleUrl);
    expect(await page.evaluate('document.cookie')).toBe('');
    for (const name of ['core', 'ext', 'sep', 'quick']) await row(page, ids[name] as string).waitFor();
    const generations = await page.locator('tbody td[data-label="Generation"]').allTextContents();
    expect(new Set(generations)).toEqual(new Set(['2025-11-25', 'ext-2026', 'sep-1686']));
    await statusOf(page, ids['quick'] as string, 'completed');

    // A task created and then cancelled by its requestor shows up, then changes, without a reload.
    const late = await (await h.client('2025-11-25')).callTool('sleepy', { label: 'arrived-late' });
    const lateId = await started(h, late);
    await statusOf(page, lateId, 'working');
    await late.cancel();
    await statusOf(page, lateId, 'cancelled');
    await page.locator('.count', { hasText: 'cancelled' }).locator('b', { hasText: '1' }).waitFor();
    await page.locator('svg.chart rect.created').first().waitFor({ state: 'attached' });
    const origin = new URL(h.consoleUrl).origin;
    expect(requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
  });

  it('filters by status, tool, generation, owner and text', async () => {
    const { page } = await open(h, ADMIN_TOKEN);
    const shown = async () =>
      (await page
        .locator('tbody tr[data-task]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task')))) as string[];
    const waitFor = async (check: (ids: string[]) => boolean) => {
      await expect.poll(async () => check(await shown()), { timeout: 10_000 }).toBe(true);
    };
    await page.selectOption('select[name="status"]', 'completed');
    await page.click('button[type="submit"]');
    await waitFor((list) => list.length === 1 && list[0] === ids['quick']);
    expect(page.url()).toContain('status=completed');

    await page.selectOption('select[name="status"]', '');
    await page.selectOption('select[name="generation"]', 'sep-1686');
    await page.click('button[type="submit"]');
    await waitFor((list) => list.length === 1 && list[0] === ids['sep']);

    await page.selectOption('select[name="generation"]', '');
    await page.fill('input[name="tool"]', 'quick');
    await page.click('button[type="submit"]');
    await waitFor((list) => list.length === 1 && list[0] === ids['quick']);

    await page.fill('input[name="tool"]', '');
    // Outside a field, "/" jumps to the search box; Enter applies.
    await page.evaluate('document.activeElement.blur()');
    await page.keyboard.press('/');
    await page.keyboard.type('ext-sleeper');
    await page.keyboard.press('Enter');
    await waitFor((list) => list.length === 1 && list[0] === ids['ext']);

    const owner = (await h.tasks.engine.store.get(ids['sep'] as string))?.owner as string;
    await page.fill('input[name="q"]', '');
    await page.fill('input[name="owner"]', owner);
    await page.click('button[type="submit"]');
    await waitFor((list) => list.includes(ids['sep'] as string) && !list.includes(ids['ext'] as string));

    // A status chip filters too.
    await page.goto(`${h.consoleUrl}#/`);
    await page.locator('.count', { hasText: 'working' }).click();
    await waitFor((list) => list.length >= 3 && !list.includes(ids['quick'] as string));
  });

  it("shows an input_required task's question and its timeline", async () => {
    const asking = await (await h.client('2025-11-25')).callTool('ask', { label: 'the shed' });
    const askId = await started(h, asking);
    const { page } = await open(h, ADMIN_TOKEN);
    await statusOf(page, askId, 'input_required');
    await row(page, askId).locator('a').click();
    await page.locator('.question', { hasText: 'Which colour for the shed?' }).waitFor();
    await page
      .locator('ol.timeline li[data-kind="input_requested"]', { hasText: 'Which colour for the shed?' })
      .waitFor();
    await page.locator('ol.timeline li[data-kind="status"]', { hasText: 'working → input_required' }).waitFor();
    const args = page.locator('section', { has: page.locator('h2', { hasText: 'Arguments' }) }).locator('pre');
    expect(await args.textContent()).toContain('the shed');

    // Answered, the page follows it to the end without a reload.
    h.answerQuestions();
    await page.locator('ol.timeline li[data-kind="input_answered"]').waitFor();
    await page.locator('h1 + p .status.completed').waitFor();
    expect((await asking.outcome()).status).toBe('completed');
  });

  it("shows a workflow task's standing offers, escaped, as they are answered and taken", async () => {
    const offering = await (await h.client('ext-2026')).callTool('offering', { label: 'the gate' });
    const offerId = await started(h, offering);
    const owner = (await h.tasks.engine.store.get(offerId))?.owner as string;
    const { page } = await open(h, ADMIN_TOKEN);
    await page.goto(`${h.consoleUrl}#/task/${offerId}`);
    const offer = (key: string) => page.locator(`.offer[data-offer="${key}"]`);
    const state = (key: string, text: string) =>
      offer(key)
        .locator('dd', { hasText: new RegExp(`^${text}$`) })
        .waitFor();
    for (const key of ['stop', 'note', 'colour']) await state(key, 'not answered');
    // The message is shown as text: its markup is not parsed.
    expect(await offer('stop').locator('strong').textContent()).toBe('Stop <b>the gate</b>?');
    expect(await offer('stop').locator('b').count()).toBe(0);
    await offer('colour').locator('strong', { hasText: 'Which colour for the gate?' }).waitFor();

    const answer = { result: { action: 'accept', content: {} } };
    // The answer to `colour` ends the sleep; the task takes it and holds on.
    expect(await h.tasks.engine.answerInput(owner, offerId, { colour: answer })).toEqual({ accepted: ['colour'] });
    await state('colour', 'answered, taken by the task');
    expect(await h.tasks.engine.answerInput(owner, offerId, { note: answer })).toEqual({ accepted: ['note'] });
    await state('note', 'answered, not yet taken by the task');
    await state('stop', 'not answered');
    await page.locator('h1 + p .status.working').waitFor();
    await page.locator('ol.timeline li[data-kind="input_offered"]').first().waitFor();
    await offering.cancel();
  });

  it('lets an admin cancel a running task after confirming; its requestor sees cancelled', async () => {
    const { page } = await open(h, ADMIN_TOKEN);
    await page.goto(`${h.consoleUrl}#/task/${ids['core']}`);
    const cancel = page.locator('#cancel');
    await cancel.waitFor();
    // Backing out of the confirmation changes nothing.
    await cancel.click();
    await page.locator('dialog[open]').waitFor();
    await page.keyboard.press('Escape');
    expect((await h.tasks.engine.store.get(ids['core'] as string))?.status).toBe('working');
    await cancel.click();
    await page.click('#confirm-cancel');
    await page.locator('h1 + p .status.cancelled').waitFor();
    await page.locator('ol.timeline li[data-kind="cancelled"]', { hasText: 'cancelled by console' }).waitFor();
    expect((await (handles['core'] as TaskHandle).outcome()).status).toBe('cancelled');
  });

  it('gives a read-only token everything to see and nothing to change', async () => {
    const { page } = await open(h, READONLY_TOKEN);
    await page.locator('#role', { hasText: 'read-only' }).waitFor();
    await page.goto(`${h.consoleUrl}#/task/${ids['ext']}`);
    await page.locator('ol.timeline li').first().waitFor();
    expect(await page.locator('#cancel').count()).toBe(0);
    // The API refuses the read-only cookie and the read-only bearer token alike.
    const status = await page.evaluate(
      async (taskId) =>
        (await fetch(`api/tasks/${taskId}/cancel`, { method: 'POST', headers: { 'x-console-request': '1' } })).status,
      ids['ext'] as string,
    );
    expect(status).toBe(403);
    const bearer = await fetch(`${h.consoleUrl}api/tasks/${ids['ext']}/cancel`, {
      method: 'POST',
      headers: { 'x-console-request': '1', authorization: `Bearer ${READONLY_TOKEN}` },
    });
    expect(bearer.status).toBe(403);
    expect((await h.tasks.engine.store.get(ids['ext'] as string))?.status).toBe('working');
  });

  it('is readable on a phone', async () => {
    const { page } = await open(h, READONLY_TOKEN, { viewport: { width: 390, height: 844 } });
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
