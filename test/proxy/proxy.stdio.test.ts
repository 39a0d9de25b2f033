import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';

import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf, type TaskSnapshot } from '../../src/client/index.js';
import { SEP_TASK_META } from '../../src/protocol/index.js';
import { HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import {
  CLI,
  EVERYTHING_STDIO,
  startProxyProcess,
  until,
  killUpstreams,
  wiretap,
  WIRETAP,
  type ProxyProcess,
} from './helpers/proxyProcess.js';
import { allDrivers, type Driver, type DriverCall } from './helpers/drivers.js';

/**
 * The gateway in front of @modelcontextprotocol/server-everything spawned over stdio (behind a wiretap that records
 * what reaches it), driven by the project's TaskClient in all three generations and by the SDK 1.32 client.
 */

const ELICITED = { name: 'Ada Lovelace', check: true, email: 'ada@example.com' };

const dir = tempDir('mcp-tasks-gateway-');
const log = join(dir, 'upstream.jsonl');
let proxy: ProxyProcess;
const clients: TaskClient[] = [];

async function connect(dialect: '2025-11-25' | 'ext-2026' | 'sep-1686', elicitation?: () => Promise<never>) {
  const client = await TaskClient.connect(
    { url: proxy.url },
    {
      dialect,
      elicitation:
        elicitation ??
        ((params) =>
          String(params.message).includes('research query')
            ? { action: 'accept', content: { interpretation: 'the chemical element' } }
            : { action: 'accept', content: ELICITED }),
    },
  );
  clients.push(client);
  return client;
}

/** The tools/call requests of a tool that reached the upstream. */
const upstreamCalls = (tool: string) =>
  wiretap(log).messages.filter(
    (m) => m['method'] === 'tools/call' && (m['params'] as { name?: string } | undefined)?.name === tool,
  );

beforeAll(async () => {
  const config = join(dir, 'proxy.json');
  writeFileSync(
    config,
    JSON.stringify({
      tools: { 'trigger-long-running-operation': { retrySafe: true, pollIntervalMs: 200 } },
      restart: { initialDelayMs: 100 },
      // SEP-1686's client-chosen ids need an owner scope: without authentication, the session.
      bindToSession: true,
    }),
  );
  const db = join(dir, 'tasks.db');
  proxy = await startProxyProcess([
    '--store',
    db,
    '--config',
    config,
    '--',
    process.execPath,
    WIRETAP,
    log,
    ...EVERYTHING_STDIO,
  ]);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await proxy?.stop();
});

for (const dialect of ['2025-11-25', 'ext-2026', 'sep-1686'] as const) {
  describe(`gateway over stdio, requestor in ${dialect}`, () => {
    it('runs an upstream tool as a task to completion', async () => {
      const client = await connect(dialect);
      expect(client.dialect).toBe(dialect);
      const handle = await client.callTool('get-sum', { a: 2, b: 40 });
      expect(await handle.accepted()).toBe(true);
      expect(textOf(await handle.result())).toContain('42');
    });

    it("passes the upstream's error through", async () => {
      const client = await connect(dialect);
      const handle = await client.callTool('get-sum', { a: 'two', b: 40 });
      const outcome = await handle.outcome();
      expect(outcome.status).toBe('failed');
      expect(outcome.status === 'failed' && outcome.message).toMatch(/invalid|validation|expected/i);
    });

    it("carries the upstream's elicitation to the requestor as the task's input request", async () => {
      const client = await connect(dialect);
      const handle = await client.callTool('trigger-elicitation-request', {});
      const text = textOf(await handle.result());
      expect(text).toContain('Ada Lovelace');
      expect(text).toContain('ada@example.com');
    });

    it("carries the upstream's sampling request to the requestor", async () => {
      const client = await TaskClient.connect(
        { url: proxy.url },
        {
          dialect,
          sampling: (params) => ({
            role: 'assistant',
            content: { type: 'text', text: `sampled ${params.messages.length} message(s)` },
            model: 'test-model',
          }),
        },
      );
      clients.push(client);
      const handle = await client.callTool('trigger-sampling-request', { prompt: 'a haiku', maxTokens: 20 });
      const text = textOf(await handle.result());
      expect(text).toContain('sampled 1 message(s)');
      expect(text).toContain('test-model');
    });

    it("bridges the upstream's own task (simulate-research-query), input included", async () => {
      const client = await connect(dialect);
      const statuses: string[] = [];
      const handle = await client.callTool('simulate-research-query', { topic: 'mercury', ambiguous: true });
      handle.onUpdate((snapshot: TaskSnapshot) => statuses.push(snapshot.status));
      expect(await handle.accepted()).toBe(true);
      const text = textOf(await handle.result());
      expect(text).toContain('Research Report: mercury (the chemical element)');
      // SEP-1686 holds the original request open and asks on it; the others poll and see the task wait.
      if (dialect !== 'sep-1686') expect(statuses).toContain('input_required');
      // The upstream ran it as its own task: the call reached it with a task part.
      const calls = upstreamCalls('simulate-research-query');
      expect(calls.at(-1)?.['params']).toHaveProperty('task');
    });
  });
}

for (const dialect of ['2025-11-25', 'ext-2026', 'sep-1686'] as const) {
  describe(`gateway over stdio: progress and cancellation, requestor in ${dialect}`, () => {
    it("reports the upstream's progress to the requestor and as the statusMessage", async () => {
      const client = await connect(dialect);
      const seen: TaskSnapshot[] = [];
      const handle = await client.callTool('trigger-long-running-operation', { duration: 1.2, steps: 4 });
      handle.onUpdate((snapshot) => seen.push(snapshot));
      expect(textOf(await handle.result())).toContain('Steps: 4');
      // What each generation carries of it: 2025-11-25 progress notifications on the original token and the
      // statusMessage; the 2026 extension the statusMessage only (no progress on tasks, spec E16); SEP-1686 has no
      // statusMessage, and this client's task requests carry no progressToken (the raw test below sends one).
      if (dialect !== 'sep-1686') expect(seen.some((s) => /^\d\/4$/.test(s.statusMessage ?? ''))).toBe(true);
      if (dialect === '2025-11-25')
        expect(seen.some((s) => s.progress?.total === 4 && s.progress.progress >= 1)).toBe(true);
    });

    it('a cancel reaches the upstream call as notifications/cancelled', async () => {
      const client = await connect(dialect);
      const before = upstreamCalls('trigger-long-running-operation').length;
      const handle = await client.callTool('trigger-long-running-operation', { duration: 30, steps: 30 });
      const call = await until(() => upstreamCalls('trigger-long-running-operation')[before], 10_000, 'the call');
      const outcome = await handle.cancel();
      expect(outcome.status).toBe('cancelled');
      const cancelled = await until(
        () =>
          wiretap(log).messages.find(
            (m) =>
              m['method'] === 'notifications/cancelled' &&
              (m['params'] as { requestId?: unknown }).requestId === call['id'],
          ),
        10_000,
        'notifications/cancelled upstream',
      );
      expect(cancelled).toBeDefined();
    });
  });
}

describe('gateway over stdio: other requestors', () => {
  it("sends the upstream's progress on a SEP-1686 original request that carries a progressToken", async () => {
    const peer = new HttpPeer(proxy.url);
    try {
      await peer.initialize({});
      // Progress of a task goes to the connection that created it: the session's notification stream.
      await peer.openNotificationStream();
      const response = await peer.request('tools/call', {
        name: 'trigger-long-running-operation',
        arguments: { duration: 1.2, steps: 4 },
        _meta: { progressToken: 'sep-progress', [SEP_TASK_META]: { taskId: randomUUID() } },
      });
      expect(JSON.stringify(response)).toContain('Long running operation completed');
      const progress = peer.notifications.filter(
        (m) =>
          m['method'] === 'notifications/progress' &&
          (m['params'] as { progressToken?: unknown }).progressToken === 'sep-progress',
      );
      expect(progress.some((m) => (m['params'] as { total?: number }).total === 4)).toBe(true);
    } finally {
      await peer.close();
    }
  });

  it("the SDK 1.32 client's callToolStream runs a bridged task through the gateway", async () => {
    const client = new V1Client({ name: 'sdk-1.32', version: '1.0.0' });
    await client.connect(new V1HttpTransport(new URL(proxy.url)));
    try {
      const seen: Array<{ type: string; result?: unknown }> = [];
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'simulate-research-query', arguments: { topic: 'tides' } },
        undefined,
        { task: { ttl: 60_000 } },
      )) {
        seen.push(message as { type: string; result?: unknown });
      }
      expect(seen[0]?.type).toBe('taskCreated');
      const last = seen.at(-1) as { type: string; result: { content: Array<{ text: string }> } };
      expect(last.type).toBe('result');
      expect(last.result.content[0]?.text).toContain('Research Report: tides');
    } finally {
      await client.close();
    }
  });
});

describe('gateway over stdio: the mcp-tasks command line as requestor', () => {
  it('calls a tool as a task through the gateway', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      CLI,
      '--url',
      proxy.url,
      '--no-store',
      '--json',
      'call',
      'echo',
      'message=from the command line',
    ]);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.some((line) => typeof line['taskId'] === 'string')).toBe(true);
    expect(stdout).toContain('Echo: from the command line');
  });
});

describe('gateway over stdio: the upstream crashes, every requestor', () => {
  // A second gateway where the long tool is not retry-safe, so calls cut off by a crash fail.
  const strictLog = join(dir, 'strict-upstream.jsonl');
  let strict: ProxyProcess;
  let strictDrivers: Driver[] = [];
  let drivers: Driver[] = [];
  const callsIn = (file: string, tool: string) =>
    wiretap(file).messages.filter(
      (m) => m['method'] === 'tools/call' && (m['params'] as { name?: string } | undefined)?.name === tool,
    ).length;

  beforeAll(async () => {
    const config = join(dir, 'strict.json');
    writeFileSync(config, JSON.stringify({ restart: { initialDelayMs: 100 }, bindToSession: true }));
    strict = await startProxyProcess([
      '--store',
      'memory',
      '--config',
      config,
      '--',
      process.execPath,
      WIRETAP,
      strictLog,
      ...EVERYTHING_STDIO,
    ]);
    strictDrivers = allDrivers({ url: () => strict.url });
    drivers = allDrivers({ url: () => proxy.url });
  });
  afterAll(async () => {
    for (const driver of [...strictDrivers, ...drivers]) await driver.close();
    await strict?.stop();
  });

  it('fails the calls in flight with a clear statusMessage, and restarts the upstream', async () => {
    const tool = 'trigger-long-running-operation';
    const before = callsIn(strictLog, tool);
    const calls = await Promise.all(strictDrivers.map((driver) => driver.call(tool, { duration: 30, steps: 30 })));
    await until(() => callsIn(strictLog, tool) >= before + calls.length, 20_000, 'every call upstream');
    // One upstream process per caller: every one of them crashes.
    const killed = killUpstreams(strictLog);
    expect(killed.length).toBeGreaterThan(0);
    for (const [index, driver] of strictDrivers.entries()) {
      const outcome = await (calls[index] as DriverCall).outcome();
      expect(outcome.status, driver.name).toBe('failed');
      expect(outcome.statusMessage ?? outcome.text, driver.name).toMatch(
        /upstream server \(stdio .*\) failed tools\/call: .*not marked retry-safe/,
      );
    }
    // Restarted with backoff: the next call works.
    await until(() => !killed.includes(wiretap(strictLog).pid as number), 10_000, 'a new upstream');
    const again = await (strictDrivers[0] as Driver).call('echo', { message: 'back' });
    expect((await again.outcome()).text).toContain('back');
    // Nothing was run twice.
    expect(callsIn(strictLog, tool)).toBe(before + calls.length);
  });

  it('runs retry-safe calls again on the restarted upstream', async () => {
    const tool = 'trigger-long-running-operation';
    const before = callsIn(log, tool);
    // Long enough that no call is over before the slowest requestor (a CLI process) has started its own.
    const calls = await Promise.all(drivers.map((driver) => driver.call(tool, { duration: 15, steps: 3 })));
    await until(() => callsIn(log, tool) >= before + calls.length, 20_000, 'every call upstream');
    const killed = killUpstreams(log);
    expect(killed.length).toBeGreaterThan(0);
    for (const [index, driver] of drivers.entries()) {
      const outcome = await (calls[index] as DriverCall).outcome();
      expect(outcome.status, driver.name).toBe('completed');
      expect(outcome.text, driver.name).toContain('Long running operation completed');
    }
    expect(callsIn(log, tool)).toBe(before + 2 * calls.length);
    expect(killed).not.toContain(wiretap(log).pid);
  });
});
