/** What a soak peer saw of one request: its answer, or how the transport refused it. */
export interface Answer {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

type ServerRequest = { id: string | number; method: string; params?: Record<string, unknown> };

/**
 * A 2025-11-25 Streamable HTTP client for the soak benchmark: one POST per request, SSE answers read as they come,
 * server requests on them (elicitation) answered by `onServerRequest`.
 */
export class SoakPeer {
  sessionId: string | undefined;
  onServerRequest: ((request: ServerRequest) => Record<string, unknown>) | undefined;
  private nextId = 1;

  constructor(
    readonly url: string,
    readonly headers: Record<string, string> = {},
  ) {}

  async initialize(): Promise<Answer> {
    const answer = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'mcp-tasks-soak', version: '1' },
    });
    if (answer.result) await (await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).arrayBuffer();
    return answer;
  }

  async request(method: string, params?: Record<string, unknown>, signal?: AbortSignal): Promise<Answer> {
    const id = this.nextId++;
    const response = await this.post({ jsonrpc: '2.0', id, method, ...(params && { params }) }, signal);
    const status = response.status;
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('application/json')) {
      const message = (await response.json()) as Answer;
      return { ...message, status };
    }
    if (!type.includes('text/event-stream') || !response.body) {
      await response.arrayBuffer();
      return { status, error: { code: 0, message: `HTTP ${status}` } };
    }
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const data = /^data: ?(.*)$/m.exec(buffer.slice(0, boundary))?.[1];
        buffer = buffer.slice(boundary + 2);
        if (!data) continue;
        const message = JSON.parse(data) as Record<string, unknown>;
        if (message['id'] === id && !('method' in message)) {
          void response.body.cancel().catch(() => {});
          return { ...(message as unknown as Answer), status };
        }
        if ('method' in message && message['id'] !== undefined && this.onServerRequest) {
          const result = this.onServerRequest(message as unknown as ServerRequest);
          await this.post({ jsonrpc: '2.0', id: message['id'], result }).then((r) => r.arrayBuffer());
        }
      }
    }
    return { status, error: { code: 0, message: 'stream ended without an answer' } };
  }

  async post(body: unknown, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(this.sessionId && { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': '2025-11-25' }),
        ...this.headers,
      },
      body: JSON.stringify(body),
      ...(signal && { signal }),
    });
    this.sessionId = response.headers.get('mcp-session-id') ?? this.sessionId;
    return response;
  }
}
