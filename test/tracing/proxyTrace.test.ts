import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startProxyProcess, type ProxyProcess } from '../proxy/helpers/proxyProcess.js';
import { HttpFixture, HttpPeer, ROOT, eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { OtlpReceiver, type ReceivedSpan } from './otlpReceiver.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Forwards every POST to `target` as it is, keeping the `params._meta` of each `tools/call` it passes on. */
async function recordingForwarder(target: string, metas: Record<string, unknown>[]): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (request.method === 'POST') {
        const message = JSON.parse(body.toString()) as {
          method?: string;
          params?: { _meta?: Record<string, unknown> };
        };
        if (message.method === 'tools/call') metas.push(message.params?._meta ?? {});
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      void fetch(target, { method: request.method ?? 'POST', headers, ...(body.length > 0 && { body }) }).then(
        async (answer) => {
          response.writeHead(answer.status, Object.fromEntries(answer.headers));
          if (answer.body) for await (const chunk of answer.body) response.write(chunk);
          response.end();
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * `mcp-tasks proxy` in front of the conformance fixture (through a forwarder that records the `_meta` of each call),
 * both exporting to one OTLP receiver: the upstream receives the caller's trace in `params._meta.traceparent`, on the
 * direct HTTP path (plain calls) and the SDK client's (the upstream's own tasks).
 */
describe('the gateway forwards the trace context upstream in params._meta', () => {
  let receiver: OtlpReceiver;
  let upstream: HttpFixture;
  let proxy: ProxyProcess;
  let peer: HttpPeer;
  let forwarder: Server;
  const received: Record<string, unknown>[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const setup = pathToFileURL(join(ROOT, 'dist/src/cli/tracing.js')).href;
    upstream = await HttpFixture.start({
      env: { ...otel, OTEL_SERVICE_NAME: 'upstream', NODE_OPTIONS: `--import ${setup}` },
    });
    forwarder = await recordingForwarder(upstream.url, received);
    const via = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}/mcp`;
    proxy = await startProxyProcess(
      ['--store', join(tempDir('mcp-tasks-gateway-trace-'), 'tasks.db'), '--upstream', via],
      {
        ...otel,
        OTEL_SERVICE_NAME: 'proxy',
      },
    );
    peer = new HttpPeer(proxy.url);
    await peer.initialize();
  });
  afterAll(async () => {
    await peer?.close();
    await proxy?.stop();
    forwarder?.closeAllConnections();
    forwarder?.close();
    await upstream?.close();
    await receiver?.close();
  });

  async function upstreamSpan(traceId: string, name: string): Promise<{ span: ReceivedSpan; parent: ReceivedSpan }> {
    const find = () => {
      const spans = receiver.spans.filter((span) => span.traceId === traceId);
      const span = spans.find((candidate) => candidate.name === name && candidate.service === 'upstream');
      const parent = spans.find((candidate) => candidate.spanId === span?.parentSpanId);
      return span && parent ? { span, parent } : undefined;
    };
    await eventually(() => find() !== undefined, 20_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: received ${JSON.stringify(receiver.spans)}; proxy: ${proxy.stderr()}`);
    });
    return find() as { span: ReceivedSpan; parent: ReceivedSpan };
  }

  /** The traceparent the upstream received with the call that carried `traceId`. */
  const receivedTraceparent = (traceId: string) =>
    received
      .map((meta) => meta['traceparent'])
      .find((value) => typeof value === 'string' && value.split('-')[1] === traceId) as string | undefined;

  it('a plain call (direct HTTP path): the upstream receives the caller’s trace with the gateway’s span as parent', async () => {
    const [traceId, callerSpanId] = [hex(16), hex(8)];
    const answer = await peer.request('tools/call', {
      name: 'greet',
      arguments: { name: 'Ada' },
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(answer.error, JSON.stringify(answer)).toBeUndefined();
    const traceparent = receivedTraceparent(traceId);
    expect(traceparent, JSON.stringify(received)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const parentId = traceparent?.split('-')[2];
    expect(parentId).not.toBe(callerSpanId);
    // The parent named upstream is one of the gateway's spans, in the caller's trace.
    await eventually(() => receiver.spans.some((span) => span.spanId === parentId), 20_000);
    const parent = receiver.spans.find((span) => span.spanId === parentId);
    expect(parent?.service).toBe('proxy');
    expect(parent?.traceId).toBe(traceId);
  });

  it('a task: the upstream’s own task is created under the gateway’s run span', async () => {
    const [traceId, callerSpanId] = [hex(16), hex(8)];
    const created = await peer.request('tools/call', {
      name: 'generate_report',
      arguments: { pages: 1 },
      task: {},
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const result = await peer.request('tasks/result', { taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Report ready: 1 pages' }]);
    const { span, parent: run } = await upstreamSpan(traceId, 'tools/call generate_report');
    expect(receivedTraceparent(traceId)?.split('-')[2]).toBe(span.parentSpanId);
    expect(run.service).toBe('proxy');
    expect(run.name).toBe('mcp.task.run');
    expect(run.attributes['mcp.task.id']).toBe(taskId);
    const gatewayTask = receiver.spans.find((span) => span.spanId === run.parentSpanId);
    const gatewayRequest = receiver.spans.find((span) => span.spanId === gatewayTask?.parentSpanId);
    expect(gatewayRequest?.parentSpanId).toBe(callerSpanId);
  });
});
