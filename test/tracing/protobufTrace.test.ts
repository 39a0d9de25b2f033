import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpPeer, ROOT, eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { OtlpReceiver } from './otlpReceiver.js';

/** `mcp-tasks serve` exporting with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, decoded by the receiver. */
describe('OTLP over HTTP in the protobuf encoding (mcp-tasks serve)', () => {
  let receiver: OtlpReceiver;
  let serve: ChildProcess;
  let output = '';
  let peer: HttpPeer;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const dir = tempDir('mcp-tasks-protobuf-trace-');
    writeFileSync(join(dir, 'a.txt'), 'a');
    writeFileSync(join(dir, 'b.txt'), 'b');
    serve = spawn(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'serve', '--port', '0'], {
      cwd: dir,
      env: {
        ...process.env,
        MCP_TASKS_STORE: join(dir, 'tasks.db'),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'demo',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serve.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    serve.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await eventually(() => /serving on (http:\/\/\S+)/.test(output));
    peer = new HttpPeer(/serving on (http:\/\/\S+)/.exec(output)?.[1] as string);
    await peer.initialize();
  });
  afterAll(async () => {
    await peer?.close();
    serve?.kill('SIGTERM');
    await receiver?.close();
  });

  it('exports the request, task and run spans of one trace as protobuf', async () => {
    const [traceId, callerSpanId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const created = await peer.request('tools/call', {
      name: 'index_directory',
      arguments: { path: '.' },
      task: {},
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await peer.request('tasks/result', { taskId });
    const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
    // Each span is exported when it ends, in whichever batch is open then: wait for all three.
    const names = ['tools/call index_directory', 'mcp.task index_directory', 'mcp.task.run'];
    await eventually(() => names.every((name) => spans().some((span) => span.name === name)), 20_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(receiver.spans)}; ${receiver.encodings}; ${output}`);
      },
    );
    expect(new Set(receiver.encodings)).toEqual(new Set(['application/x-protobuf']));
    const request = spans().find((span) => span.name === 'tools/call index_directory');
    expect(request?.parentSpanId).toBe(callerSpanId);
    expect(request?.kind).toBe(2);
    expect(request?.service).toBe('demo');
    expect(request?.attributes['mcp.method.name']).toBe('tools/call');
    const task = spans().find((span) => span.name === 'mcp.task index_directory');
    expect(task?.parentSpanId).toBe(request?.spanId);
    expect(task?.attributes).toMatchObject({ 'mcp.task.id': taskId, 'mcp.task.status': 'completed' });
    expect(task?.endMs).toBeGreaterThan(task?.startMs ?? Infinity);
    const run = spans().find((span) => span.name === 'mcp.task.run');
    expect(run?.parentSpanId).toBe(task?.spanId);
    // An integer attribute (int64 in protobuf) decodes to the attempt number.
    expect(Number(run?.attributes['mcp.task.attempt'])).toBe(1);
  });
});
