import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';
import { createJwtIssuer, type JwtIssuer } from './helpers/jwtIssuer.js';

/**
 * Several principals behind one gateway: an upstream's question, sampling request and log line reach exactly the
 * caller whose call caused them (each caller has its own upstream connection), over a stdio and an HTTP upstream, for
 * plain and task-augmented calls alike. The upstream (test/fixtures/askingUpstream.mjs) names the caller in both.
 */

const ASKING = fileURLToPath(new URL('../fixtures/askingUpstream.mjs', import.meta.url));
const ISSUER = 'https://auth.example.com';
const AUDIENCE = 'https://gateway.example.com/mcp';
const dir = tempDir('mcp-tasks-gateway-principals-');
let issuer: JwtIssuer;
let jwtConfig: string;
let httpUpstream: { url: string; child: ChildProcess };
const proxies: ProxyProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];

const token = (sub: string): Promise<string> => issuer.token(sub);

async function startHttpUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [ASKING, 'http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { url: chunk.toString().trim(), child };
}

/** What one caller saw: the questions it was asked, the log lines it got, and its call's answer. */
interface Seen {
  questions: string[];
  logs: string[];
}

/** A plain SDK client (2025-11-25, no tasks) that answers every question with `answer` and records what it saw. */
async function plainCaller(url: string, answer: string, bearer?: string): Promise<{ client: Client; seen: Seen }> {
  const seen: Seen = { questions: [], logs: [] };
  const client = new Client({ name: `caller-${answer}`, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.questions.push(String(request.params.message));
    return { action: 'accept', content: { answer } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    seen.logs.push(String(notification.params.data));
  });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      bearer ? { requestInit: { headers: { authorization: `Bearer ${bearer}` } } } : {},
    ),
  );
  closers.push(() => client.close());
  return { client, seen };
}

const textOfResult = (result: unknown) =>
  ((result as { content: Array<{ text?: string }> }).content ?? []).map((block) => block.text ?? '').join('\n');

async function proxyFor(upstream: 'stdio' | 'http', withAuth: boolean): Promise<ProxyProcess> {
  const args = ['--store', 'memory', ...(withAuth ? ['--config', jwtConfig] : [])];
  const proxy = await startProxyProcess(
    upstream === 'stdio'
      ? [...args, '--', process.execPath, ASKING, 'stdio']
      : [...args, '--upstream', httpUpstream.url],
  );
  proxies.push(proxy);
  return proxy;
}

beforeAll(async () => {
  issuer = await createJwtIssuer(ISSUER, AUDIENCE, 'principals');
  jwtConfig = join(dir, 'jwt.json');
  writeFileSync(jwtConfig, JSON.stringify({ auth: { jwt: issuer.config } }));
  httpUpstream = await startHttpUpstream();
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  for (const proxy of proxies) await proxy.stop();
  httpUpstream?.child.kill('SIGTERM');
});

describe.each([
  ['stdio', true],
  ['http', true],
  ['stdio', false],
  ['http', false],
] as const)('gateway with a %s upstream (auth %s): two callers at once', (upstream, withAuth) => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    proxy = await proxyFor(upstream, withAuth);
  });

  it('plain calls: each caller gets only its own question and log line, and its own answer goes into its own call', async () => {
    const alice = await plainCaller(proxy.url, 'from alice', withAuth ? await token('alice') : undefined);
    const bob = await plainCaller(proxy.url, 'from bob', withAuth ? await token('bob') : undefined);
    // Alice's question comes while Bob's call is in flight (Bob's own comes later).
    const aliceCall = alice.client.callTool({ name: 'ask', arguments: { who: 'alice', delayMs: 1500 } });
    const bobCall = bob.client.callTool({ name: 'ask', arguments: { who: 'bob', delayMs: 3000 } });
    expect(textOfResult(await aliceCall)).toBe('alice was answered: from alice');
    expect(textOfResult(await bobCall)).toBe('bob was answered: from bob');
    expect(alice.seen.questions).toEqual(['question for alice']);
    expect(bob.seen.questions).toEqual(['question for bob']);
    expect(alice.seen.logs).toEqual(['log line of alice']);
    expect(bob.seen.logs).toEqual(['log line of bob']);
  });

  it("task-augmented calls: each task's question is asked of its own requestor only", async () => {
    const questions: Record<string, string[]> = { alice: [], bob: [] };
    const connect = async (who: 'alice' | 'bob') => {
      const client = await TaskClient.connect(
        { url: proxy.url, ...(withAuth && { headers: { authorization: `Bearer ${await token(who)}` } }) },
        {
          dialect: '2025-11-25',
          elicitation: (params) => {
            questions[who]?.push(String(params.message));
            return { action: 'accept', content: { answer: `from ${who}` } };
          },
        },
      );
      closers.push(() => client.close());
      return client;
    };
    const [alice, bob] = await Promise.all([connect('alice'), connect('bob')]);
    const aliceTask = await alice.callTool('ask', { who: 'alice', delayMs: 1500 }, { mode: 'task' });
    const bobTask = await bob.callTool('ask', { who: 'bob', delayMs: 3000 }, { mode: 'task' });
    expect(aliceTask.taskId).toEqual(expect.any(String));
    expect(textOf(await aliceTask.result())).toBe('alice was answered: from alice');
    expect(textOf(await bobTask.result())).toBe('bob was answered: from bob');
    expect(questions).toEqual({ alice: ['question for alice'], bob: ['question for bob'] });
  });
});

describe('gateway: what a stdio upstream inherits', () => {
  it("gets the safe default set and what --upstream-env names, never the gateway's own secrets", async () => {
    const proxy = await startProxyProcess(
      ['--store', 'memory', '--upstream-env', 'NAMED_FOR_UPSTREAM', '--', process.execPath, ASKING, 'stdio'],
      {
        MCP_TASKS_CONSOLE_TOKEN: 'console-secret-123456',
        MCP_TASKS_STORE: 'postgres://user:password@127.0.0.1/db',
        DATABASE_URL: 'postgres://user:password@127.0.0.1/app',
        AWS_SECRET_ACCESS_KEY: 'cloud-secret',
        NAMED_FOR_UPSTREAM: 'yes',
      },
    );
    proxies.push(proxy);
    const { client } = await plainCaller(proxy.url, 'x');
    const names = JSON.parse(textOfResult(await client.callTool({ name: 'env', arguments: {} }))) as string[];
    expect(names).toContain('PATH');
    expect(names).toContain('NAMED_FOR_UPSTREAM');
    for (const secret of ['MCP_TASKS_CONSOLE_TOKEN', 'MCP_TASKS_STORE', 'DATABASE_URL', 'AWS_SECRET_ACCESS_KEY'])
      expect(names).not.toContain(secret);
  });

  it('refuses --upstream-env for an HTTP upstream', async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'proxy', '--port', '0', '--upstream', httpUpstream.url, '--upstream-env', 'HOME'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).not.toBe(0);
    expect(stderr).toContain('--upstream-env is for a stdio upstream');
  });
});
