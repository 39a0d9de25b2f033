import type { EventTypeOptions } from 'mcp-tasks/engine';

/** A research task's finding at the end of each stage (`research`'s intermediate results). */
export const FINDING = 'io.github.mcp-tasks.demo.finding';
/** A test run's results so far, every 5 tests and at the end (`run_test_suite`'s intermediate results). */
export const TEST_RESULTS = 'io.github.mcp-tasks.demo.test_results';

/** The event types the demo's long tools emit (docs/events.md): each names the tool whose tasks are its source. */
export const DEMO_EVENT_TYPES: EventTypeOptions[] = [
  {
    name: FINDING,
    description: 'A finding of the research task, at the end of each of its stages',
    payloadSchema: {
      type: 'object',
      properties: {
        stage: { type: 'string' },
        finding: { type: 'string' },
        sources: { type: 'integer', minimum: 0 },
      },
      required: ['stage', 'finding'],
    },
    tools: ['research'],
  },
  {
    name: TEST_RESULTS,
    description: 'The test suite’s results so far: tests run, passed and failed',
    payloadSchema: {
      type: 'object',
      properties: {
        suite: { type: 'string' },
        run: { type: 'integer', minimum: 0 },
        of: { type: 'integer', minimum: 1 },
        passed: { type: 'integer', minimum: 0 },
        failed: { type: 'integer', minimum: 0 },
      },
      required: ['suite', 'run', 'of', 'passed', 'failed'],
    },
    tools: ['run_test_suite'],
  },
];
