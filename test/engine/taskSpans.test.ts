import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../src/engine/contracts/EngineHooks.js';
import type { TaskRecord } from '../../src/engine/record/TaskRecord.js';
import { TaskSpans } from '../../src/engine/tracing/TaskSpans.js';
import { makeRecord } from '../helpers/records.js';

describe('TaskSpans', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => trace.disable());

  function spansOf(maxOpen: number) {
    const listeners = new Map<string, (record: TaskRecord | undefined) => void>();
    const stopped: string[] = [];
    const released: string[] = [];
    const spans = new TaskSpans(
      {
        observe: (taskId, listener) => {
          listeners.set(taskId, listener);
          return () => stopped.push(taskId);
        },
        release: async (taskId) => {
          released.push(taskId);
          return undefined;
        },
      },
      () => undefined,
      silentLogger,
      maxOpen,
    );
    const open = (taskId: string) => {
      const record = makeRecord({ taskId });
      spans.hold(record, spans.begin(record));
    };
    return { spans, listeners, stopped, released, open };
  }

  it('past maxOpen, hands over the span opened longest ago of those still open, however they ended', async () => {
    const { spans, listeners, stopped, released, open } = spansOf(3);
    for (const taskId of ['t0', 't1', 't2']) open(taskId);
    // t1 ends: its span is finished and no longer held.
    listeners.get('t1')?.(makeRecord({ taskId: 't1', status: 'completed', terminalAt: Date.now() }));
    expect(spans.size).toBe(2);
    open('t3');
    expect(released).toEqual([]);
    open('t4');
    open('t5');
    // The oldest still open go: t0, then t2 (t1 had ended).
    expect(released).toEqual(['t0', 't2']);
    expect(stopped).toEqual(['t1', 't0', 't2']);
    expect(spans.size).toBe(3);
    await new Promise((resolve) => setImmediate(resolve));
    const ended = exporter.getFinishedSpans().map((span) => span.attributes['mcp.task.id']);
    // Handed over with the task gone (release found no record): the span is ended unfinished, as the hand-over does.
    expect(ended).toEqual(['t1', 't0', 't2']);
  });

  it('keeps handing over the oldest open span through thousands of spans ending out of order', () => {
    const { spans, listeners, released, open } = spansOf(5);
    const model: string[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const taskId = `t${i}`;
      if (model.length >= 5) expected.push(model.shift() as string);
      open(taskId);
      model.push(taskId);
      // Every other step, a task that is not the oldest ends.
      if (i % 2 === 1 && model.length > 1) {
        const ending = model.splice(1 + (i % (model.length - 1)), 1)[0] as string;
        listeners.get(ending)?.(makeRecord({ taskId: ending, status: 'completed', terminalAt: Date.now() }));
      }
      expect(spans.size).toBe(model.length);
    }
    expect(released).toEqual(expected);
    expect(released.length).toBeGreaterThan(1000);
  });
});
