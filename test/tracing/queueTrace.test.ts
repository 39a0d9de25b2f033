import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isolatedQueue, postgresBackend, type StoreBackend } from '../distributed/backends.js';
import { HttpFixture, ROOT, eventually, type HttpPeer } from '../helpers/rawWire.js';
import { requireService } from '../helpers/services.js';
import { OtlpReceiver, expectEndedAt, type ReceivedSpan } from './otlpReceiver.js';

const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
const postgresUrl = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

if (redisUrl && postgresUrl) {
  describe('one trace per task across a server and a queue worker (OTLP/HTTP JSON)', () => {
    let receiver: OtlpReceiver;
    let store: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    let server: HttpFixture;
    let worker: ChildProcess;
    let peer: HttpPeer;
    let workerOutput = '';

    beforeAll(async () => {
      receiver = await OtlpReceiver.start();
      store = await postgresBackend(postgresUrl);
      queue = isolatedQueue(redisUrl);
      const otel = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      };
      const env = { MCP_TASKS_STORE: store.spec, REDIS_URL: redisUrl, MCP_TASKS_QUEUE: queue.name, ...otel };
      // The fixture server is a plain node program: tracing comes from the --import-able setup.
      const setup = pathToFileURL(join(ROOT, 'dist/src/cli/tracing.js')).href;
      server = await HttpFixture.start({
        env: { ...env, MCP_TASKS_EXECUTOR: 'queue', OTEL_SERVICE_NAME: 'server', NODE_OPTIONS: `--import ${setup}` },
      });
      // `mcp-tasks worker` starts tracing itself.
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
          '--policies',
          'FIXTURE_POLICIES',
        ],
        { env: { ...process.env, ...env, OTEL_SERVICE_NAME: 'worker' }, stdio: ['ignore', 'pipe', 'pipe'] },
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
      await receiver?.close();
    });

    /** The trace once the task span (ended by the server when it learns of the worker's outcome) has arrived. */
    async function traceOf(traceId: string, taskId: string): Promise<ReceivedSpan[]> {
      const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
      const has = (name: string) =>
        spans().some((span) => span.name.startsWith(name) && span.attributes['mcp.task.id'] === taskId);
      await eventually(() => has('mcp.task.run') && has('mcp.task '), 20_000).catch((error: unknown) => {
        throw new Error(`${String(error)}: received ${JSON.stringify(receiver.spans)}; worker: ${workerOutput}`);
      });
      return spans();
    }

    function expectOneTrace(spans: ReceivedSpan[], callerSpanId: string, taskId: string): void {
      const request = spans.find((span) => span.name === 'tools/call generate_report');
      expect(request, JSON.stringify(spans)).toBeDefined();
      expect(request?.parentSpanId).toBe(callerSpanId);
      expect(request?.service).toBe('server');
      expect(request?.attributes['mcp.method.name']).toBe('tools/call');
      const task = spans.find((span) => span.name === 'mcp.task generate_report');
      expect(task?.parentSpanId).toBe(request?.spanId);
      expect(task?.service).toBe('server');
      expect(task?.attributes).toMatchObject({
        'mcp.task.id': taskId,
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'generate_report',
        'mcp.task.status': 'completed',
      });
      const run = spans.find((span) => span.name === 'mcp.task.run');
      expect(run?.parentSpanId).toBe(task?.spanId);
      expect(run?.service).toBe('worker');
      expect(run?.attributes).toMatchObject({ 'mcp.task.id': taskId, 'mcp.task.run.outcome': 'finished' });
      // The server's task span covers the worker's run: it ends when the server learns of the stored outcome.
      expect(task?.startMs).toBeLessThanOrEqual(run?.startMs ?? 0);
      expect(task?.endMs).toBeGreaterThan(run?.startMs ?? Infinity);
    }

    it('links the task to the caller’s traceparent header', async () => {
      const [traceId, callerSpanId] = [hex(16), hex(8)];
      const created = await peer.request(
        'tools/call',
        { name: 'generate_report', arguments: { pages: 1 }, task: {} },
        { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } },
      );
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      const result = await peer.request('tasks/result', { taskId });
      expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Report ready: 1 pages' }]);
      expectOneTrace(await traceOf(traceId, taskId), callerSpanId, taskId);
    });

    it('links the task to the traceparent in the request’s _meta', async () => {
      const [traceId, callerSpanId] = [hex(16), hex(8)];
      const created = await peer.request('tools/call', {
        name: 'generate_report',
        arguments: { pages: 2 },
        task: {},
        _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      await peer.request('tasks/result', { taskId });
      expectOneTrace(await traceOf(traceId, taskId), callerSpanId, taskId);
    });

    it('puts the worker’s step spans under its run span, in the task span the server ends', async () => {
      const [traceId, callerSpanId] = [hex(16), hex(8)];
      const created = await peer.request('tools/call', {
        name: 'journaled_steps',
        arguments: { steps: 2, stepMs: 50 },
        task: {},
        _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      await peer.request('tasks/result', { taskId });
      const spans = await traceOf(traceId, taskId);
      const request = spans.find((span) => span.name === 'tools/call journaled_steps');
      expect(request?.parentSpanId).toBe(callerSpanId);
      const task = spans.find((span) => span.name === 'mcp.task journaled_steps');
      expect(task?.parentSpanId).toBe(request?.spanId);
      expect(task?.attributes['mcp.task.status']).toBe('completed');
      const run = spans.find((span) => span.name === 'mcp.task.run');
      expect(run?.parentSpanId).toBe(task?.spanId);
      await eventually(() => receiver.spans.filter((span) => span.parentSpanId === run?.spanId).length === 2);
      const steps = receiver.spans.filter((span) => span.parentSpanId === run?.spanId);
      expect(steps.map((step) => [step.name, step.service, step.attributes['mcp.task.step.name']])).toEqual([
        ['mcp.task.step', 'worker', 'step-0'],
        ['mcp.task.step', 'worker', 'step-1'],
      ]);
      const { result } = await peer.request('tasks/get', { taskId });
      expectEndedAt(task, (result as { lastUpdatedAt: string }).lastUpdatedAt);
    });
  });
}
