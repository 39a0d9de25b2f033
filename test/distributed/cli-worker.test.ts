import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, ROOT, eventually, type HttpPeer } from '../helpers/rawWire.js';
import { requireService } from '../helpers/services.js';
import { isolatedQueue, postgresBackend, type StoreBackend } from './backends.js';

const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
const postgresUrl = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');

if (redisUrl && postgresUrl) {
  describe('`mcp-tasks worker` runs the tasks a queue-backed server instance enqueues', () => {
    let store: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    let server: HttpFixture;
    let worker: ChildProcess;
    let peer: HttpPeer;
    let workerOutput = '';

    beforeAll(async () => {
      store = await postgresBackend(postgresUrl);
      queue = isolatedQueue(redisUrl);
      const env = { MCP_TASKS_STORE: store.spec, REDIS_URL: redisUrl, MCP_TASKS_QUEUE: queue.name };
      server = await HttpFixture.start({ env: { ...env, MCP_TASKS_EXECUTOR: 'queue' } });
      worker = spawn(
        process.execPath,
        [
          join(ROOT, 'dist/src/cli/main.js'),
          'worker',
          '--module',
          join(ROOT, 'dist/examples/conformance/fixtureTools.js'),
          '--export',
          'createFixtureServer',
          '--queue',
          queue.name,
          '--concurrency',
          '2',
          '--max-running-per-owner',
          '2',
          '--policies',
          'FIXTURE_POLICIES',
        ],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      worker.stdout?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
      worker.stderr?.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
      await eventually(() => workerOutput.includes('running tasks from'));
      peer = await server.peer();
      await peer.initialize();
    });
    afterAll(async () => {
      await peer?.close();
      worker?.kill('SIGKILL');
      await server?.close();
      await queue?.dispose();
      await store?.dispose();
    });

    it('completes a task with the tools of the module it loaded, and stops cleanly on SIGTERM', async () => {
      const created = await peer.request('tools/call', { name: 'generate_report', arguments: { pages: 2 }, task: {} });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      const result = await peer.request('tasks/result', { taskId });
      expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Report ready: 2 pages' }]);
      const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    });
  });
}

describe('`mcp-tasks worker` without its settings', () => {
  it('is a usage error naming what is missing', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'worker', '--module', 'x.js'], {
      env: { ...process.env, MCP_TASKS_STORE: '', REDIS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(output).toMatch(/--store/);
  });
});
