import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, ROOT, eventually, type HttpPeer } from '../helpers/rawWire.js';
import { OtlpReceiver, expectEndedAt, type ReceivedSpan } from './otlpReceiver.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('one trace per task with the in-process executor: request → task → runs → steps (OTLP/HTTP JSON)', () => {
  let receiver: OtlpReceiver;
  let server: HttpFixture;
  let peer: HttpPeer;
  let env: Record<string, string>;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const setup = pathToFileURL(join(ROOT, 'dist/src/cli/tracing.js')).href;
    env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'server',
      NODE_OPTIONS: `--import ${setup}`,
    };
    server = await HttpFixture.start({ env });
    peer = await server.peer();
    await peer.initialize();
  });
  afterAll(async () => {
    await peer?.close();
    await server?.close();
    await receiver?.close();
  });

  /** Creates a task of `tool` under a fresh caller span, and waits for its result. */
  async function runTask(
    on: HttpPeer,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ traceId: string; callerSpanId: string; taskId: string }> {
    const [traceId, callerSpanId] = [hex(16), hex(8)];
    const created = await on.request('tools/call', {
      name: tool,
      arguments: args,
      task: {},
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const result = await on.request('tasks/result', { taskId });
    expect(result.error, JSON.stringify(result)).toBeUndefined();
    return { traceId, callerSpanId, taskId };
  }

  async function spansOf(traceId: string, until: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
    await eventually(() => until(spans()), 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: received ${JSON.stringify(spans())}`);
    });
    return spans();
  }

  const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

  it('keeps the task span open from creation to the terminal status, with the run and its steps under it', async () => {
    const { traceId, callerSpanId, taskId } = await runTask(peer, 'journaled_steps', { steps: 2, stepMs: 60 });
    const spans = await spansOf(traceId, (all) => named(all, 'mcp.task journaled_steps').length > 0);
    const [request] = named(spans, 'tools/call journaled_steps');
    expect(request?.parentSpanId).toBe(callerSpanId);
    const [task] = named(spans, 'mcp.task journaled_steps');
    expect(task?.parentSpanId).toBe(request?.spanId);
    expect(task?.attributes).toMatchObject({ 'mcp.task.id': taskId, 'mcp.task.status': 'completed' });
    const runs = named(spans, 'mcp.task.run');
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run?.parentSpanId).toBe(task?.spanId);
    expect(run?.attributes['mcp.task.run.outcome']).toBe('finished');
    const steps = named(spans, 'mcp.task.step');
    expect(steps.map((step) => step.attributes['mcp.task.step.name'])).toEqual(['step-0', 'step-1']);
    for (const step of steps) {
      expect(step.parentSpanId).toBe(run?.spanId);
      expect(step.attributes).toMatchObject({ 'mcp.task.step.attempt': 1, 'mcp.task.step.replayed': false });
      expect(step.endMs - step.startMs).toBeGreaterThanOrEqual(55);
    }
    // The task span covers the whole task: from creation, before the run, to the terminal status, after the steps.
    const { result } = await peer.request('tasks/get', { taskId });
    const record = result as { createdAt: string; lastUpdatedAt: string };
    expect(task?.startMs).toBe(Date.parse(record.createdAt));
    expect(task?.startMs).toBeLessThanOrEqual(run?.startMs ?? 0);
    expect(task?.endMs).toBeGreaterThanOrEqual(Math.max(...steps.map((step) => step.endMs)) - 1);
    expectEndedAt(task, record.lastUpdatedAt);
    expect((task?.endMs ?? 0) - (task?.startMs ?? 0)).toBeGreaterThanOrEqual(120);
  });

  it('records a failing step attempt on its span, and the retry in the next run', async () => {
    const { traceId } = await runTask(peer, 'flaky_step', { failures: 1, baseDelayMs: 50 });
    const spans = await spansOf(traceId, (all) => named(all, 'mcp.task flaky_step').length > 0);
    const [task] = named(spans, 'mcp.task flaky_step');
    expect(task?.attributes['mcp.task.status']).toBe('completed');
    const runs = named(spans, 'mcp.task.run').sort((a, b) => a.startMs - b.startMs);
    expect(runs.map((run) => run.attributes['mcp.task.run.outcome'])).toEqual(['suspended', 'finished']);
    for (const run of runs) expect(run.parentSpanId).toBe(task?.spanId);
    const steps = named(spans, 'mcp.task.step').sort((a, b) => a.startMs - b.startMs);
    expect(steps.map((step) => step.parentSpanId)).toEqual(runs.map((run) => run.spanId));
    expect(steps[0]?.attributes).toMatchObject({ 'mcp.task.step.attempt': 1, 'mcp.task.step.outcome': 'retrying' });
    expect(steps[0]?.status.code).toBe(2);
    expect(steps[0]?.events.map((event) => event.name)).toContain('exception');
    expect(steps[1]?.attributes['mcp.task.step.attempt']).toBe(2);
    expect(steps[1]?.status.code).toBe(0);
  });

  it('marks a durable sleep and a replayed step as events on the run spans', async () => {
    const { traceId } = await runTask(peer, 'durable_sleep', { ms: 150 });
    const spans = await spansOf(traceId, (all) => named(all, 'mcp.task durable_sleep').length > 0);
    const runs = named(spans, 'mcp.task.run').sort((a, b) => a.startMs - b.startMs);
    expect(runs).toHaveLength(2);
    const [first, second] = runs;
    expect(first?.events.map((event) => event.name)).toEqual(['mcp.task.sleep']);
    expect(first?.events[0]?.attributes['mcp.task.step.name']).toBe('nap');
    const replayed = second?.events.find((event) => event.name === 'mcp.task.step.replayed');
    expect(replayed?.attributes).toMatchObject({ 'mcp.task.step.name': 'before', 'mcp.task.step.state': 'completed' });
    // Only the steps that ran have spans: `before` in the first run, `after` in the second.
    const steps = named(spans, 'mcp.task.step');
    expect(steps.map((step) => [step.attributes['mcp.task.step.name'], step.parentSpanId])).toEqual([
      ['before', first?.spanId],
      ['after', second?.spanId],
    ]);
  });

  it('ends a cancelled task’s span at the cancellation', async () => {
    const [traceId, callerSpanId] = [hex(16), hex(8)];
    const created = await peer.request('tools/call', {
      name: 'journaled_steps',
      arguments: { steps: 1, stepMs: 30_000 },
      task: {},
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await spansOf(traceId, (all) => named(all, 'tools/call journaled_steps').length > 0);
    await peer.request('tasks/cancel', { taskId });
    const spans = await spansOf(traceId, (all) => named(all, 'mcp.task journaled_steps').length > 0);
    const [task] = named(spans, 'mcp.task journaled_steps');
    expect(task?.attributes['mcp.task.status']).toBe('cancelled');
    const { result } = await peer.request('tasks/get', { taskId });
    expectEndedAt(task, (result as { lastUpdatedAt: string }).lastUpdatedAt);
  });

  it('emits mcp.task.end from the process that finishes a task whose creating process was killed', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'mcp-tasks-trace-')), 'tasks.db');
    const crashEnv = { ...env, MCP_TASKS_STORE: store, MCP_TASKS_LEASE_MS: '1000', OTEL_SERVICE_NAME: 'first' };
    const first = await HttpFixture.start({ env: crashEnv });
    const [traceId, callerSpanId] = [hex(16), hex(8)];
    let taskId = '';
    try {
      const creator = await first.peer();
      await creator.initialize();
      const created = await creator.request('tools/call', {
        name: 'journaled_steps',
        arguments: { steps: 1, stepMs: 1500 },
        task: {},
        _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
      });
      taskId = (created.result?.['task'] as { taskId: string }).taskId;
      await spansOf(traceId, (all) => named(all, 'tools/call journaled_steps').length > 0);
    } finally {
      first.child.kill('SIGKILL');
    }
    const second = await HttpFixture.start({ env: { ...crashEnv, OTEL_SERVICE_NAME: 'second' } });
    try {
      const finisher = await second.peer();
      await finisher.initialize();
      const result = await finisher.request('tasks/result', { taskId });
      expect(result.error, JSON.stringify(result)).toBeUndefined();
      const spans = await spansOf(traceId, (all) => named(all, 'mcp.task.end').length > 0);
      // The task span died with the first process; its replacement has the same parent as the runs and covers the task.
      expect(named(spans, 'mcp.task journaled_steps')).toEqual([]);
      const [end] = named(spans, 'mcp.task.end');
      const runs = named(spans, 'mcp.task.run');
      expect(runs.length).toBeGreaterThanOrEqual(1);
      for (const run of runs) expect(run.parentSpanId).toBe(end?.parentSpanId);
      expect(end?.service).toBe('second');
      const { result: record } = await finisher.request('tasks/get', { taskId });
      const { createdAt, lastUpdatedAt, status } = record as {
        createdAt: string;
        lastUpdatedAt: string;
        status: string;
      };
      expect(status).toBe('completed');
      expect(end?.attributes).toMatchObject({ 'mcp.task.id': taskId, 'mcp.task.status': 'completed' });
      expect(end?.startMs).toBe(Date.parse(createdAt));
      expectEndedAt(end, lastUpdatedAt);
      await finisher.close();
    } finally {
      await second.close();
    }
  });
});
