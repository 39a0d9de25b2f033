import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURE_EVENT_TYPES, STAGE_EVENT } from '../../examples/conformance/fixtureEventTools.js';
import { createFixtureServer, FIXTURE_POLICIES } from '../../examples/conformance/fixtureTools.js';
import { TaskClient, textOf, type TaskEvent } from '../../src/client/index.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';

/** The conformance fixture's tools and policies with its events option on (what MCP_TASKS_EVENTS=1 serves). */
describe('the conformance fixture’s staged_compute (Task Event Sources, EVENTS-SPEC §14)', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let client: TaskClient;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createFixtureServer,
      tools: FIXTURE_POLICIES,
      store: 'memory',
      events: { types: FIXTURE_EVENT_TYPES },
    });
    http = await serveHttp(tasks, { port: 0 });
    client = await TaskClient.connect({ url: http.url });
  });
  afterAll(async () => {
    await client.close();
    await http.close();
    await tasks.close();
  });

  it('TS1 TS6: its task names the stage type as its event source and emits one event per stage, then its result', async () => {
    const handle = await client.callTool('staged_compute', { stages: 3, stageMs: 30 });
    expect(handle.isTask).toBe(true);
    expect(handle.eventSource).toMatchObject({ name: STAGE_EVENT, input: { taskId: handle.taskId } });
    const events: TaskEvent[] = [];
    for await (const event of handle.events()) events.push(event);
    expect(events.map((event) => event.name)).toEqual([STAGE_EVENT, STAGE_EVENT, STAGE_EVENT]);
    expect(events.map((event) => event.data)).toEqual([
      { stage: 1, of: 3 },
      { stage: 2, of: 3 },
      { stage: 3, of: 3 },
    ]);
    expect(textOf(await handle.result())).toBe('staged_compute: 3 stages done');
  });

  it('refuses stages out of range with a tool error', async () => {
    const handle = await client.callTool('staged_compute', { stages: 0 });
    // A tool error ends the task failed, with the tool's message.
    await expect(handle.result()).rejects.toThrow('stages must be an integer from 1 to 100');
  });
});
