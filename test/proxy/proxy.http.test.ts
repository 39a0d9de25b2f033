import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { TaskClient, textOf } from '../../src/client/index.js';
import { startEverythingHttp, type RunningServer } from '../client/helpers/everything.js';
import { tempDir } from '../helpers/tmp.js';
import { allDrivers, type Driver, type DriverCall } from './helpers/drivers.js';
import { startProxyProcess, storedTask, until, type ProxyProcess } from './helpers/proxyProcess.js';
import { createJwtIssuer, type JwtIssuer } from './helpers/jwtIssuer.js';

/**
 * The gateway in front of @modelcontextprotocol/server-everything over Streamable HTTP, behind OAuth bearer tokens
 * (config `auth.jwt`, so tasks belong to the token's principal across sessions and restarts), driven by every
 * requestor (TaskClient in all three generations, SDK 1.32 callToolStream, ext-tasks in both modes, the CLI): a
 * bridged upstream task, a kill -9 of the gateway mid-task followed by a restart on the same SQLite store, and an
 * upstream that goes away.
 */

const ISSUER = 'https://auth.gateway.test';
const AUDIENCE = 'https://gateway.test/mcp';

const dir = tempDir('mcp-tasks-gateway-http-');
const db = join(dir, 'tasks.db');
const config = join(dir, 'proxy.json');
let everything: RunningServer;
let proxy: ProxyProcess;
let issuer: JwtIssuer;
let drivers: Driver[] = [];
const clients: TaskClient[] = [];

const token = (sub: string): Promise<string> => issuer.token(sub);

const start = () => startProxyProcess(['--store', db, '--config', config, '--upstream', everything.url]);

beforeAll(async () => {
  issuer = await createJwtIssuer(ISSUER, AUDIENCE, 'proxy-test');
  writeFileSync(
    config,
    JSON.stringify({
      // Short leases, so the restarted gateway recovers the tasks of the killed one quickly.
      engine: { leaseMs: 1000, recoveryIntervalMs: 500 },
      // Every task here has one owner (the token's principal), who may run three quarters of these at once.
      concurrency: 32,
      auth: { jwt: issuer.config },
    }),
  );
  everything = await startEverythingHttp();
  proxy = await start();
  drivers = allDrivers({ url: () => proxy.url, headers: { authorization: `Bearer ${await token('ada')}` } });
});

afterAll(async () => {
  for (const driver of drivers) await driver.close();
  for (const client of clients) await client.close();
  await proxy?.stop();
  await everything?.stop();
});

describe('gateway over Streamable HTTP, every requestor', () => {
  it('auth.jwt: no token is refused, and another principal cannot see the task', async () => {
    const anonymous = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(anonymous.status).toBe(401);

    const own = await TaskClient.connect(
      { url: proxy.url, headers: { authorization: `Bearer ${await token('ada')}` } },
      { dialect: '2025-11-25' },
    );
    const other = await TaskClient.connect(
      { url: proxy.url, headers: { authorization: `Bearer ${await token('grace')}` } },
      { dialect: '2025-11-25' },
    );
    clients.push(own, other);
    const handle = await own.callTool('echo', { message: 'mine' });
    expect(textOf(await handle.result())).toContain('mine');
    await expect(other.attach(handle.taskId as string).then((h) => h.outcome())).rejects.toThrow(/not found/i);
  });

  it("carries a plain upstream call's progress and question to the requestor", async () => {
    const client = await TaskClient.connect(
      { url: proxy.url, headers: { authorization: `Bearer ${await token('ada')}` } },
      {
        dialect: '2025-11-25',
        elicitation: () => ({
          action: 'accept',
          content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' },
        }),
      },
    );
    clients.push(client);
    const asked = await client.callTool('trigger-elicitation-request', {});
    expect(textOf(await asked.result())).toContain('Ada Lovelace');
    const seen: string[] = [];
    const long = await client.callTool('trigger-long-running-operation', { duration: 1.2, steps: 3 });
    long.onUpdate((snapshot) => seen.push(snapshot.statusMessage ?? ''));
    expect(textOf(await long.result())).toContain('Long running operation completed');
    expect(seen.some((message) => /^\d\/3$/.test(message))).toBe(true);
  });

  it("runs the upstream's own task (simulate-research-query) bridged, for every requestor", async () => {
    const calls = await Promise.all(
      drivers.map((driver) => driver.call('simulate-research-query', { topic: `bridges ${driver.name}` })),
    );
    for (const [index, driver] of drivers.entries()) {
      const call = calls[index] as DriverCall;
      const outcome = await call.outcome();
      expect(outcome, driver.name).toMatchObject({ status: 'completed' });
      expect(outcome.text, driver.name).toContain(`Research Report: bridges ${driver.name}`);
      expect(storedTask(db, call.taskId)?.meta['upstreamTask'], driver.name).toMatchObject({
        taskId: expect.any(String),
      });
    }
  });

  it('survives kill -9 mid-task: results kept, upstream tasks followed to their end, other calls failed', async () => {
    const done: DriverCall[] = [];
    for (const driver of drivers) {
      const call = await driver.call('echo', { message: `kept for ${driver.name}` });
      expect((await call.outcome()).text, driver.name).toContain(`kept for ${driver.name}`);
      done.push(call);
    }
    // The rest at once, so every call is still running when the gateway dies.
    const [plain, bridged] = await Promise.all([
      Promise.all(
        drivers.map((driver) => driver.call('trigger-long-running-operation', { duration: 300, steps: 300 })),
      ),
      Promise.all(
        drivers.map((driver) => driver.call('simulate-research-query', { topic: `restarts ${driver.name}` })),
      ),
    ]);
    // Each upstream task is under way, and known durably, before the gateway dies.
    const refs = await until(
      () => {
        const found = bridged.map((call) => storedTask(db, call.taskId)?.meta['upstreamTask']);
        return found.every((ref) => ref !== undefined) && (found as Array<{ taskId: string; sessionId: string }>);
      },
      30_000,
      'the upstream tasks to be recorded',
    );
    await proxy.kill();

    proxy = await start();
    for (const [index, driver] of drivers.entries()) {
      const kept = await driver.follow(done[index] as DriverCall);
      expect(kept, driver.name).toMatchObject({ status: 'completed' });
      expect(kept.text, driver.name).toContain(`kept for ${driver.name}`);
      const report = await driver.follow(bridged[index] as DriverCall);
      expect(report.status, driver.name).toBe('completed');
      expect(report.text, driver.name).toContain(`Research Report: restarts ${driver.name}`);
      const interrupted = await driver.follow(plain[index] as DriverCall);
      expect(interrupted.status, driver.name).toBe('failed');
      expect(interrupted.statusMessage ?? interrupted.text, driver.name).toMatch(
        /not re-run because it is not marked safe to retry/,
      );
    }

    // The gateway's tasks were following the upstream tasks they started before the kill, in the session of then,
    // and those ran to their end.
    const sessionId = refs[0]?.sessionId as string;
    expect(refs.every((ref) => ref.sessionId === sessionId)).toBe(true);
    const upstream = await TaskClient.connect(
      { url: everything.url, sessionId, protocolVersion: '2025-11-25' },
      { dialect: '2025-11-25' },
    );
    clients.push(upstream);
    const tasks: Array<{ taskId: string; status: string }> = [];
    for (let cursor: string | undefined, page = 0; page === 0 || cursor !== undefined; page++) {
      const listed = await upstream.sdk.request(
        { method: 'tasks/list', params: cursor === undefined ? {} : { cursor } },
        z.looseObject({}),
      );
      tasks.push(...(listed['tasks'] as typeof tasks));
      cursor = typeof listed['nextCursor'] === 'string' ? listed['nextCursor'] : undefined;
    }
    for (const ref of refs) expect(tasks.find((task) => task.taskId === ref.taskId)?.status).toBe('completed');
  }, 240_000);

  it('an upstream that is down gives a clear error, never a task stuck working', async () => {
    // Each requestor is connected (and knows the tools) while the upstream is still up.
    for (const driver of drivers)
      expect((await (await driver.call('echo', { message: 'up' })).outcome()).status).toBe('completed');
    await everything.stop();
    // Stopping twice is harmless.
    await everything.stop();
    for (const driver of drivers) {
      const outcome = await (await driver.call('echo', { message: 'nobody home' })).outcome();
      expect(outcome.status, driver.name).toBe('failed');
      expect(outcome.statusMessage ?? outcome.text, driver.name).toMatch(/upstream server \(http .*\) failed/);
    }
  });
});
