import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { TaskClient } from '../../src/client/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { freePort } from '../client/helpers/everything.js';
import { gates, STAGE, startEventsServer, type EventsServer } from '../events/eventsServer.js';
import { tempDir } from '../helpers/tmp.js';
import { ensureBuilt, jsonLines, runCli, startCli } from './helpers/cli.js';

/** The `mcp-tasks` binary against this project's server with Events and webhooks, callers by bearer token. */
const STATUS = 'io.github.mcp-tasks.task_status';

function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token ? { token, clientId: token, scopes: [] } : undefined;
}

let server: EventsServer;
let webhooks: OutboxWebhookDeliveries;
let hookPort: number;
let alice: TaskClient;
let env: Record<string, string>;
let target: string[];

beforeAll(async () => {
  ensureBuilt();
  hookPort = await freePort();
  const store = new MemoryStore();
  webhooks = new OutboxWebhookDeliveries({
    store: store.webhooks,
    // The CLI's receiver listens on loopback: allowed here as an operator would for a trial.
    policy: new CallbackPolicy({ allowOrigins: [`http://127.0.0.1:${hookPort}`] }),
    limits: { pollMs: 50 },
  });
  server = await startEventsServer(store, { webhooks }, { authenticate });
  webhooks.start();
  alice = await TaskClient.connect({ url: server.http.url, headers: { authorization: 'Bearer alice' } });
  env = { MCP_TASKS_HANDLES: join(tempDir(), 'handles.json') };
  target = ['--url', server.http.url, '-H', 'Authorization: Bearer alice'];
});

afterAll(async () => {
  await alice?.close();
  await webhooks?.stop();
  await server?.close();
});

/** A task of alice's that emits `stages` events, then waits for the test to let it finish. */
async function gatedTask(stages: number) {
  const gate = `cli-${Math.random()}`;
  const handle = await alice.callTool('staged', { stages, stageMs: 0, gate }, { follow: false });
  await expect.poll(() => gates.has(gate)).toBe(true);
  return { handle, taskId: handle.taskId as string, cursor: handle.eventSource?.initialCursor as string, gate };
}

describe('mcp-tasks call and watch print a task’s intermediate results live', () => {
  it('call: one stderr line per event before the result (human)', async () => {
    const run = await runCli(['call', 'staged', 'stages=3', 'stageMs=30', ...target], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toContain('3 stages');
    const lines = run.stderr.split('\n').filter((line) => line.includes(' event '));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\[[\d.]+s\] event com\.example\.stage {2}\{"index":0,"of":3\}$/);
    // Printed live, before the outcome line.
    expect(run.stderr.indexOf('"index":2')).toBeLessThan(run.stderr.indexOf('completed in'));
    expect(run.stdout).not.toContain('com.example.stage');
  });

  it('call --json: one event line each, with its cursor, before the outcome', async () => {
    const run = await runCli(['--json', 'call', 'staged', 'stages=2', 'stageMs=30', ...target], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    const lines = jsonLines(run.stdout);
    const events = lines.filter((line) => line['type'] === 'event');
    expect(events.map((event) => event['data'])).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
    expect(events[0]).toMatchObject({ name: STAGE, eventId: `${lines[0]?.['taskId']}:0` });
    expect(events[0]?.['cursor']).toBeTypeOf('string');
    expect(lines.findIndex((line) => line['type'] === 'outcome')).toBeGreaterThan(
      lines.findIndex((line) => line['type'] === 'event'),
    );
  });

  it('watch: a detached task’s events, its source kept in the handle store', async () => {
    const gate = `watch-${Math.random()}`;
    const detached = await runCli(['call', '--detach', 'staged', 'stages=2', 'stageMs=0', `gate=${gate}`, ...target], {
      env,
    });
    expect(detached.code).toBe(EXIT_CODES.completed);
    const taskId = detached.stdout.trim();
    const watch = startCli(['--json', 'watch', taskId, ...target], { env });
    await watch.waitFor((stdout) => stdout.includes('"type":"status"'));
    await expect.poll(() => gates.has(gate)).toBe(true);
    gates.get(gate)?.();
    const run = await watch.done;
    expect(run.code).toBe(EXIT_CODES.completed);
    const events = jsonLines(run.stdout).filter((line) => line['type'] === 'event');
    expect(events.map((event) => event['data'])).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
  });
});

describe('mcp-tasks events', () => {
  it('list: the event types with their delivery modes', async () => {
    const human = await runCli(['events', 'list', ...target], { env });
    expect(human.code).toBe(EXIT_CODES.completed);
    expect(human.stdout).toMatch(/com\.example\.stage\s+poll,push,webhook\s+A stage of the task finished/);
    const json = await runCli(['--json', 'events', 'list', ...target], { env });
    const names = jsonLines(json.stdout).map((line) => line['name']);
    expect(names).toEqual(expect.arrayContaining([STAGE, STATUS]));
  });

  it('poll: the events after a cursor, and the cursor to send next', async () => {
    const { taskId, cursor, gate } = await gatedTask(2);
    const run = await runCli(['events', 'poll', STAGE, '--task', taskId, '--cursor', cursor, ...target], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout.trim().split('\n')).toHaveLength(2);
    expect(run.stdout).toContain('com.example.stage  {"index":1,"of":2}');
    const next = /next: --cursor (\S+)/.exec(run.stderr)?.[1];
    expect(next).toBeDefined();
    const again = await runCli(['--json', 'events', 'poll', STAGE, `taskId=${taskId}`, '--cursor', next!, ...target], {
      env,
    });
    expect(jsonLines(again.stdout)).toEqual([
      expect.objectContaining({ type: 'cursor', cursor: next, hasMore: false }),
    ]);
    gates.get(gate)?.();
  });

  it('poll: another caller’s task is refused as a missing one', async () => {
    const { taskId, gate } = await gatedTask(1);
    const bob = ['--url', server.http.url, '-H', 'Authorization: Bearer bob'];
    const theirs = await runCli(['events', 'poll', STAGE, '--task', taskId, ...bob], { env });
    const missing = await runCli(['events', 'poll', STAGE, '--task', 'no-such-task', ...bob], { env });
    expect(theirs.code).toBe(EXIT_CODES.failed);
    expect(theirs.stderr).toContain('[-32602]');
    expect(theirs.stderr.replace(taskId, 'ID')).toBe(missing.stderr.replace('no-such-task', 'ID'));
    gates.get(gate)?.();
  });

  it('stream: prints events as they come and ends with the task', async () => {
    const { taskId, cursor, gate } = await gatedTask(1);
    const stream = startCli(['--json', 'events', 'stream', STATUS, '--task', taskId, '--cursor', cursor, ...target], {
      env,
    });
    await stream
      .waitFor((stdout) => stdout.includes('"type":"note"') || stdout.includes('"working"'), 3000)
      .catch(() => undefined);
    gates.get(gate)?.();
    const run = await stream.done;
    expect(run.code).toBe(EXIT_CODES.completed);
    const statuses = jsonLines(run.stdout)
      .filter((line) => line['type'] === 'event')
      .map((line) => (line['data'] as { status: string }).status);
    expect(statuses.at(-1)).toBe('completed');
  });

  it('webhook: subscribes a local receiver, answers the handshake, prints verified deliveries, ends with the task', async () => {
    const { taskId, gate } = await gatedTask(0);
    const hook = startCli(['events', 'webhook', STATUS, '--task', taskId, '--port', String(hookPort), ...target], {
      env,
    });
    await hook.waitFor((_stdout, stderr) => stderr.includes('Receiving'));
    const url = /on (http:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(hook.stderr())?.[1] as string;
    // A delivery that is not signed with the subscription's secret is refused and not shown.
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
      body: JSON.stringify({ eventId: 'forged', name: STATUS, timestamp: '', data: { status: 'failed' } }),
    });
    expect(forged.status).toBe(401);
    gates.get(gate)?.();
    const run = await hook.done;
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(run.stdout).toMatch(
      new RegExp(`webhook ${taskId}:\\d+ {2}${STATUS.replace(/\./g, '\\.')} {2}.*"completed"`),
    );
    expect(run.stdout).toContain('webhook terminated');
    expect(run.stdout).not.toContain('forged');
  });

  it('webhook: a server that refuses the callback URL fails the command with its code', async () => {
    const { taskId, gate } = await gatedTask(0);
    const port = await freePort(); // not allowlisted: loopback is refused (SSRF)
    const run = await runCli(['events', 'webhook', STATUS, '--task', taskId, '--port', String(port), ...target], {
      env,
    });
    expect(run.code).toBe(EXIT_CODES.failed);
    expect(run.stderr).toContain('[-32602]');
    gates.get(gate)?.();
  });
});
