// When a cancelled MCP tool really stopped: the SDK answers nothing for a cancelled request, so the run's end is
// heard from the tool's handler itself. A handler that ignores its abort is flagged on the task's page, in
// `mcp-tasks get --timeline` and in the metrics within the grace period; one that honours it shows how long it took.
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TimelineEntry } from '../../src/engine/index.js';
import { ensureBuilt, runCli } from '../cli/helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import {
  ABORT_GRACE_MS,
  ADMIN_TOKEN,
  chromiumAvailable,
  deafTool,
  POLITE_STOP_MS,
  started,
  startConsoleHarness,
  type ConsoleHarness,
} from './consoleHarness.js';

const available = chromiumAvailable();

describe.skipIf(!available)('a cancelled MCP tool, on its task page, the CLI and the metrics', () => {
  let h: ConsoleHarness;
  let storePath: string;
  beforeAll(async () => {
    ensureBuilt();
    storePath = join(tempDir(), 'tasks.db');
    h = await startConsoleHarness({ store: storePath });
  }, 120_000);
  afterAll(async () => {
    deafTool.release();
    await h?.close();
  });

  /** The timeline the task page reads. */
  async function timelineOf(taskId: string): Promise<TimelineEntry[]> {
    const response = await fetch(`${h.consoleUrl}api/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { timeline: TimelineEntry[] }).timeline;
  }

  const cliTimeline = async (taskId: string) =>
    (await runCli(['get', taskId, '--timeline', '--task-store', storePath])).stdout;

  const ignoredAborts = async () =>
    Number(/^mcp_tasks_abort_ignored_total (\d+)$/m.exec((await h.tasks.metrics?.text()) ?? '')?.[1] ?? NaN);

  it('flags a tool that ignores its abort within the grace period, then records when it returned', async () => {
    const before = await ignoredAborts();
    const client = await h.client('2025-11-25');
    const handle = await client.callTool('deaf', { label: 'the report' });
    const taskId = await started(h, handle);
    const page = await (await h.browser()).newPage();
    await page.goto(`${h.consoleUrl}?token=${ADMIN_TOKEN}#/task/${taskId}`);
    const entry = (kind: string, text: string | RegExp) =>
      page.locator(`ol.timeline li[data-kind="${kind}"]`, { hasText: text });
    await page.click('#cancel');
    await page.click('#confirm-cancel');
    const cancelledAt = Date.now();
    expect((await handle.outcome()).status).toBe('cancelled');
    await entry('run_overdue', 'still running 0.4 s after it was told to stop: the work ignores the abort').waitFor();
    // Within the grace period, and a margin for a loaded machine; the handler has not returned, so no end yet.
    expect(Date.now() - cancelledAt).toBeLessThan(ABORT_GRACE_MS + 2000);
    expect(await entry('run_ended', /.*/).count()).toBe(0);
    expect((await timelineOf(taskId)).map((e) => e.kind)).toContain('run_overdue');
    expect(await cliTimeline(taskId)).toContain(
      'still running 0.4 s after it was told to stop: the work ignores the abort',
    );
    expect(await ignoredAborts()).toBe(before + 1);

    deafTool.release();
    await entry('run_ended', /run 1 stopped \d{3,} ms after it was told to stop/).waitFor();
    const ended = (await timelineOf(taskId)).find((e) => e.kind === 'run_ended');
    expect(ended).toMatchObject({ ran: 'aborted', attempt: 1 });
    expect(ended?.stopMs).toBeGreaterThanOrEqual(ABORT_GRACE_MS);
    expect(await cliTimeline(taskId)).toMatch(/run 1 stopped \d{3,} ms after it was told to stop/);
  });

  it('records how long a tool that honours its abort took to stop, and flags nothing', async () => {
    const before = await ignoredAborts();
    const client = await h.client('2025-11-25');
    const handle = await client.callTool('polite', { label: 'the index' });
    const taskId = await started(h, handle);
    await handle.cancel();
    let ended: TimelineEntry | undefined;
    for (const deadline = Date.now() + 10_000; !ended && Date.now() < deadline;) {
      ended = (await timelineOf(taskId)).find((e) => e.kind === 'run_ended');
      if (!ended) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ended).toMatchObject({ ran: 'aborted', attempt: 1 });
    // The handler's own clean-up time, not the moment the runtime stopped waiting for it.
    expect(ended?.stopMs).toBeGreaterThanOrEqual(POLITE_STOP_MS - 10);
    expect(ended?.stopMs).toBeLessThan(ABORT_GRACE_MS);
    expect((await timelineOf(taskId)).map((e) => e.kind)).not.toContain('run_overdue');
    expect(await cliTimeline(taskId)).toMatch(/run 1 stopped \d{3,} ms after it was told to stop/);
    expect(await ignoredAborts()).toBe(before);
  });
});
