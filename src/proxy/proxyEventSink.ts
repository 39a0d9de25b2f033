import { createHash } from 'node:crypto';

import type { TaskEvent } from '../client/index.js';
import {
  StaleLeaseError,
  TaskEventRejectedError,
  type EngineLogger,
  type TaskEngine,
  type TaskRecord,
} from '../engine/index.js';
import type { UpstreamEventSink } from './followUpstreamEvents.js';

/** Longest upstream eventId kept as it is in the dedupe key; a longer one is hashed. */
const MAX_KEY_ID = 200;

/**
 * The proxy task's own event log as the sink of its upstream task's events: each event of a passed-through type is
 * emitted into the proxy task under the same name and data (checked against the payloadSchema the proxy registered),
 * keyed by the upstream's eventId, so a resumed follow that reads an event again stores nothing new. Types not passed
 * through are dropped; an event the log refuses (invalid, too large, the log full, the task ended) is logged once per
 * reason and skipped: the task goes on (spec TS16).
 */
export function proxyEventSink(
  engine: TaskEngine,
  task: TaskRecord,
  passed: ReadonlySet<string>,
  logger: EngineLogger,
): UpstreamEventSink {
  const warned = new Set<string>();
  const warnOnce = (reason: string, details: Record<string, unknown>, message: string) => {
    if (warned.has(reason)) return;
    warned.add(reason);
    logger.warn({ taskId: task.taskId, reason, ...details }, message);
  };
  return {
    async emit(event: TaskEvent) {
      if (!passed.has(event.name)) {
        warnOnce(`type:${event.name}`, { eventType: event.name }, 'proxy: upstream event of a type not passed through');
        return;
      }
      try {
        await engine.emitEvent(
          task.taskId,
          { type: event.name, data: event.data, key: `upstream:${keyId(event.eventId)}` },
          task.attempts,
        );
      } catch (error) {
        const reason =
          error instanceof TaskEventRejectedError ? error.reason : error instanceof StaleLeaseError ? 'stale' : 'store';
        warnOnce(reason, { eventType: event.name, error: String(error) }, 'proxy: upstream event not re-emitted');
      }
    },
    refused(error) {
      warnOnce(
        `refused:${error.code}`,
        { code: error.code, error: error.message },
        "proxy: the upstream task's event subscription failed",
      );
    },
  };
}

function keyId(eventId: string): string {
  return eventId.length <= MAX_KEY_ID ? eventId : `sha256:${createHash('sha256').update(eventId).digest('base64url')}`;
}
