/**
 * Decodes an OTLP `ExportTraceServiceRequest` in the protobuf encoding (opentelemetry-proto, trace/v1) into the shape
 * of its JSON encoding, with a plain reader of the protobuf wire format: ids as hex, times as decimal strings.
 */

type Field = bigint | Buffer;

/** The fields of one message by number, in order; varints and fixed numbers as bigint, length-delimited as bytes. */
function fieldsOf(buffer: Buffer): Map<number, Field[]> {
  const fields = new Map<number, Field[]>();
  let offset = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[offset++];
      if (byte === undefined) throw new Error('truncated varint');
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (offset < buffer.length) {
    const key = Number(varint());
    const [number, wireType] = [key >>> 3, key & 7];
    let value: Field;
    if (wireType === 0) value = varint();
    else if (wireType === 1) {
      value = buffer.readBigUInt64LE(offset);
      offset += 8;
    } else if (wireType === 2) {
      const length = Number(varint());
      value = buffer.subarray(offset, offset + length);
      offset += length;
    } else if (wireType === 5) {
      value = BigInt(buffer.readUInt32LE(offset));
      offset += 4;
    } else throw new Error(`unsupported wire type ${wireType}`);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const bytes = (fields: Map<number, Field[]>, number: number): Buffer | undefined => {
  const value = fields.get(number)?.[0];
  return Buffer.isBuffer(value) ? value : undefined;
};
const number = (fields: Map<number, Field[]>, field: number): bigint | undefined => {
  const value = fields.get(field)?.[0];
  return typeof value === 'bigint' ? value : undefined;
};
const messages = (fields: Map<number, Field[]>, field: number): Map<number, Field[]>[] =>
  (fields.get(field) ?? []).filter(Buffer.isBuffer).map(fieldsOf);
const text = (fields: Map<number, Field[]>, field: number) => bytes(fields, field)?.toString('utf8');

/** KeyValue { key = 1; AnyValue value = 2 }, AnyValue { string 1; bool 2; int64 3; double 4 }. */
function attributes(list: Map<number, Field[]>[]) {
  return list.map((pair) => {
    const value = bytes(pair, 2);
    const any = value ? fieldsOf(value) : new Map<number, Field[]>();
    const double = number(any, 4);
    return {
      key: text(pair, 1) ?? '',
      value: {
        ...(any.has(1) && { stringValue: text(any, 1) ?? '' }),
        ...(any.has(2) && { boolValue: number(any, 2) === 1n }),
        ...(any.has(3) && { intValue: String(BigInt.asIntN(64, number(any, 3) ?? 0n)) }),
        ...(double !== undefined && { doubleValue: doubleOf(double) }),
      },
    };
  });
}

/** A fixed64 field's bits as the IEEE 754 double they encode. */
function doubleOf(bits: bigint): number {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(bits);
  return buffer.readDoubleLE(0);
}

const hex = (buffer: Buffer | undefined) => (buffer && buffer.length > 0 ? buffer.toString('hex') : undefined);

export function decodeTraceRequest(body: Buffer) {
  return {
    resourceSpans: messages(fieldsOf(body), 1).map((resourceSpans) => ({
      resource: { attributes: attributes(messages(messages(resourceSpans, 1)[0] ?? new Map(), 1)) },
      scopeSpans: messages(resourceSpans, 2).map((scope) => ({
        spans: messages(scope, 2).map((span) => {
          const status = messages(span, 15)[0];
          const parentSpanId = hex(bytes(span, 4));
          return {
            traceId: hex(bytes(span, 1)) ?? '',
            spanId: hex(bytes(span, 2)) ?? '',
            ...(parentSpanId !== undefined && { parentSpanId }),
            name: text(span, 5) ?? '',
            kind: Number(number(span, 6) ?? 0n),
            startTimeUnixNano: String(number(span, 7) ?? 0n),
            endTimeUnixNano: String(number(span, 8) ?? 0n),
            attributes: attributes(messages(span, 9)),
            events: messages(span, 11).map((event) => ({
              name: text(event, 2) ?? '',
              attributes: attributes(messages(event, 3)),
            })),
            status: {
              code: Number((status && number(status, 3)) ?? 0n),
              ...(status && text(status, 2) && { message: text(status, 2) }),
            },
          };
        }),
      })),
    })),
  };
}
