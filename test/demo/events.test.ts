import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, type TaskEvent } from '../../src/client/index.js';
import { startDemo } from '../helpers/demoServer.js';
import { tempDir } from '../helpers/tmp.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** The demo as `npm start` runs it: its long tools publish intermediate results as events. */
describe('demo: the long tools emit intermediate results', () => {
  let demo: Awaited<ReturnType<typeof startDemo>>;
  let client: TaskClient;

  beforeAll(async () => {
    demo = await startDemo({ MCP_TASKS_STORE: join(tempDir(), 'demo.db') });
    client = await TaskClient.connect({ url: demo.url });
  });
  afterAll(async () => {
    await client?.close();
    demo?.child.kill('SIGTERM');
  });

  it('declares the event types of research and run_test_suite', async () => {
    const names = (await client.events().list()).events.map((type) => type.name);
    expect(names).toEqual(
      expect.arrayContaining(['io.github.mcp-tasks.demo.finding', 'io.github.mcp-tasks.demo.test_results']),
    );
  });

  it('research: a finding at the end of each stage', async () => {
    const handle = await client.callTool('research', { topic: 'otters', depth: 1 }, { follow: false });
    expect(handle.eventSource?.name).toBe('io.github.mcp-tasks.demo.finding');
    const findings = await collect(client.followEvents(handle.eventSource!));
    expect(findings.map((event) => event.data['stage'])).toEqual([
      'planning',
      'gathering sources',
      'analysing',
      'writing the report',
    ]);
    expect(findings[3]?.data).toMatchObject({ finding: 'a draft report on otters', sources: 4 });
    expect((await handle.outcome()).status).toBe('completed');
  });

  it('run_test_suite: the results so far every 5 tests, failures as they happen', async () => {
    const handle = await client.callTool('run_test_suite', { suite: 'unit', count: 10, failing: 2 }, { follow: false });
    const results = await collect(client.followEvents(handle.eventSource!));
    expect(results.map((event) => event.data)).toEqual([
      { suite: 'unit', run: 5, of: 10, passed: 5, failed: 0 },
      { suite: 'unit', run: 10, of: 10, passed: 8, failed: 2 },
    ]);
    expect((await handle.outcome()).status).toBe('failed');
  });
});
