import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'vitest';

import { decodeTraceRequest } from './otlpProtobuf.js';

/** One span as OTLP/JSON carries it (ids in hex). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes: Record<string, unknown>;
  service: unknown;
  /** Epoch milliseconds, from the exported nanoseconds. */
  startMs: number;
  endMs: number;
  /** The status code (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpAttribute[];
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  status?: { code?: number; message?: string };
  events?: { name: string; attributes?: OtlpAttribute[] }[];
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue,
    ]),
  );
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1, JSON (`application/json`) or protobuf (`application/x-protobuf`)
 * encoding: what the SDK of each process exports lands here.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** The content type of each export received. */
  readonly encodings: string[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const body = Buffer.concat(chunks);
          if (request.method !== 'POST' || request.url !== '/v1/traces') {
            response.writeHead(404).end();
            return;
          }
          try {
            const type = request.headers['content-type'] ?? '';
            receiver.encodings.push(type);
            if (type.startsWith('application/x-protobuf')) {
              receiver.accept(decodeTraceRequest(body));
              // An empty ExportTraceServiceResponse.
              response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
            } else {
              receiver.accept(JSON.parse(body.toString()) as OtlpExport);
              response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
            }
          } catch {
            response.writeHead(400).end();
          }
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private accept(payload: OtlpExport): void {
    for (const resourceSpans of payload.resourceSpans ?? []) {
      const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
            name: span.name,
            ...(span.kind !== undefined && { kind: span.kind }),
            attributes: attributesOf(span.attributes),
            service,
            startMs: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
            endMs: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
            status: { code: span.status?.code ?? 0, ...(span.status?.message && { message: span.status.message }) },
            events: (span.events ?? []).map((event) => ({
              name: event.name,
              attributes: attributesOf(event.attributes),
            })),
          });
        }
      }
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A task span ends at the time the terminal status was decided (`terminalAt`, not on the wire), taken just before the
 * write stamped `lastUpdatedAt`: at most that, and within the same synchronous step.
 */
export function expectEndedAt(span: ReceivedSpan | undefined, lastUpdatedAt: string): void {
  const stamped = Date.parse(lastUpdatedAt);
  expect(span?.endMs).toBeLessThanOrEqual(stamped);
  expect(span?.endMs).toBeGreaterThan(stamped - 1000);
}
