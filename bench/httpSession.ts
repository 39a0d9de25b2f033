/** A minimal Streamable HTTP session for benchmarks: one POST per request, JSON or SSE answers. */
export class HttpSession {
  private sessionId: string | undefined;
  private nextId = 1;

  constructor(private readonly url: string) {}

  /** The session's `Mcp-Session-Id`, once initialized (undefined for a server without sessions). */
  get id(): string | undefined {
    return this.sessionId;
  }

  async initialize(capabilities: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const result = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities,
      clientInfo: { name: 'mcp-tasks-bench', version: '1' },
    });
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  /** Sends a request and returns its result; throws on a JSON-RPC error. */
  async request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const messages = await this.post({ jsonrpc: '2.0', id, method, ...(params && { params }) });
    const response = messages.find((m) => m['id'] === id) as
      { result?: Record<string, unknown>; error?: { message: string } } | undefined;
    if (!response) throw new Error(`no response to ${method}`);
    if (response.error) throw new Error(`${method}: ${response.error.message}`);
    return response.result as Record<string, unknown>;
  }

  private async post(body: unknown): Promise<Array<Record<string, unknown>>> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(this.sessionId && { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': '2025-11-25' }),
      },
      body: JSON.stringify(body),
    });
    this.sessionId = response.headers.get('mcp-session-id') ?? this.sessionId;
    const text = await response.text();
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      return (
        text
          .split('\n')
          // Empty data lines are priming events (resumable streams), not messages.
          .filter((line) => line.startsWith('data:') && line.slice(5).trim().length > 0)
          .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown>)
      );
    }
    return text ? [JSON.parse(text) as Record<string, unknown>] : [];
  }
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one host. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
