import type { McpTasks, TaskStore } from 'mcp-tasks';
import { CallbackPolicy, OutboxWebhookDeliveries, type EventsOptions, type EventTypeOptions } from 'mcp-tasks/engine';
import { emitTaskEvent } from 'mcp-tasks/workflow';

import { sleep } from '../shared/sleep.js';
import { object, text, type FixtureTool } from './FixtureTool.js';

/** The type `staged_compute` emits: one per finished stage, so its task's event source carries intermediate results. */
export const STAGE_EVENT = 'io.github.mcp-tasks.conformance.stage';

const MAX_STAGES = 100;
const MAX_STAGE_MS = 60_000;

/**
 * An untasked type that emits on a timer while the process runs (startClock): first in `events/list` (sorted by name),
 * so the conformance scenarios, which take the first type offering the mode they test, find one with no required
 * arguments that offers poll, push and webhook and has events to deliver (EVENTS-SPEC §3 "Practice (CONF)").
 */
export const CLOCK_EVENT = 'io.github.mcp-tasks.conformance.clock';
/** An untasked type that emits nothing: the spare for one-shot controls, and the type with a small subscription cap. */
export const SPARE_EVENT = 'io.github.mcp-tasks.conformance.spare';
/** The spare type's cap on one principal's webhook subscriptions (the `events_conformance_quota` answer). */
export const SPARE_MAX_SUBSCRIPTIONS = 2;
/** The clock's cadence (EVENTS-SPEC §3: 1–2 s). */
export const CLOCK_INTERVAL_MS = 1_500;

/** The fixture's event types (served with MCP_TASKS_EVENTS=1): the clock, the spare, and the staged task's. */
export const FIXTURE_EVENT_TYPES: EventTypeOptions[] = [
  {
    name: CLOCK_EVENT,
    description: `A tick of the fixture's clock, every ${CLOCK_INTERVAL_MS} ms while the server runs`,
    payloadSchema: object({ tick: { type: 'integer', minimum: 1 }, at: { type: 'string' } }, ['tick', 'at']),
    taskScoped: false,
  },
  {
    name: SPARE_EVENT,
    description: 'Never fires: a spare type for one-shot diagnostic controls',
    payloadSchema: object({ note: { type: 'string' } }, []),
    taskScoped: false,
    maxSubscriptions: SPARE_MAX_SUBSCRIPTIONS,
  },
  {
    name: STAGE_EVENT,
    description: 'A stage of a staged_compute task finished',
    payloadSchema: object({ stage: { type: 'integer', minimum: 1 }, of: { type: 'integer', minimum: 1 } }, [
      'stage',
      'of',
    ]),
    tools: ['staged_compute'],
  },
];

/** Task tools that emit events (EVENTS-SPEC §14: the Task Event Sources scenarios call `staged_compute`). */
export const FIXTURE_EVENT_TOOLS: Record<string, FixtureTool> = {
  staged_compute: {
    description: 'Runs `stages` stages of `stageMs` each, emitting one intermediate event per stage, then returns.',
    inputSchema: object(
      {
        stages: { type: 'integer', minimum: 1, maximum: MAX_STAGES },
        stageMs: { type: 'integer', minimum: 0, maximum: MAX_STAGE_MS },
      },
      ['stages'],
    ),
    policy: { taskSupport: 'optional', pollIntervalMs: 200, retrySafe: true },
    run: async (args, ctx) => {
      const stages = Number(args['stages']);
      const stageMs = Number(args['stageMs'] ?? 100);
      if (!Number.isInteger(stages) || stages < 1 || stages > MAX_STAGES)
        return { ...text(`staged_compute: stages must be an integer from 1 to ${MAX_STAGES}`), isError: true };
      if (!Number.isInteger(stageMs) || stageMs < 0 || stageMs > MAX_STAGE_MS)
        return { ...text(`staged_compute: stageMs must be an integer from 0 to ${MAX_STAGE_MS}`), isError: true };
      for (let stage = 1; stage <= stages; stage++) {
        await sleep(stageMs, ctx.mcpReq.signal);
        // Keyed by stage: a task run again after a crash does not emit a stage twice.
        await emitTaskEvent(ctx, STAGE_EVENT, { stage, of: stages }, { key: `stage-${stage}` });
      }
      return text(`staged_compute: ${stages} stages done`);
    },
  },
};

/**
 * Callbacks the conformance suite subscribes that never resolve: consented to by configuration (EVENTS-SPEC §7.6 path
 * (b), no handshake) and let past the https and SSRF guards, as §14 asks; deliveries there simply fail.
 */
export const CONFORMANCE_CALLBACK_PREFIX = 'https://conformance.invalid/mcp-events/';

/**
 * The fixture's events option over `store` (MCP_TASKS_EVENTS=1): its types, the §14 diagnostic controls, and, when
 * the store keeps a webhook outbox, webhook delivery from it. Start the deliveries once the runtime is up.
 */
export async function fixtureEvents(
  store: TaskStore | undefined,
): Promise<{ events: EventsOptions; webhooks: OutboxWebhookDeliveries | undefined }> {
  const outbox = store?.webhooks;
  if (!store || !outbox)
    return { events: { types: FIXTURE_EVENT_TYPES, conformanceControls: true }, webhooks: undefined };
  await store.init();
  await outbox.init();
  const webhooks = new OutboxWebhookDeliveries({
    store: outbox,
    policy: new CallbackPolicy({
      allowOrigins: [new URL(CONFORMANCE_CALLBACK_PREFIX).origin],
      trustedPrefixes: [CONFORMANCE_CALLBACK_PREFIX],
    }),
  });
  return { events: { types: FIXTURE_EVENT_TYPES, conformanceControls: true, webhooks }, webhooks };
}

/**
 * Emits the clock type every `intervalMs` through `tasks.emitEvent`. The timer does not keep the process alive; the
 * returned function stops it (call it before closing `tasks`).
 */
export function startClock(tasks: McpTasks, intervalMs = CLOCK_INTERVAL_MS): () => void {
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    // A failed emit (the store closing under it) loses one tick, nothing else.
    tasks.emitEvent(CLOCK_EVENT, { tick, at: new Date().toISOString() }).catch(() => {});
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
