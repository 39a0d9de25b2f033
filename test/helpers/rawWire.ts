import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';

import { tempDir } from './tmp.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FIXTURE = join(ROOT, 'dist/examples/conformance/server.js');

export type Message = Record<string, unknown> & {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
};
export type Response = Message & {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** Answers the server's requests (elicitation, sampling) in tests. */
export type ServerRequestHandler = (request: Message) => Promise<Record<string, unknown>> | Record<string, unknown>;

/**
 * A raw JSON-RPC peer for wire tests: it sends exactly the messages a test writes and records everything the server
 * sends, so assertions are about bytes on the wire, not about what an SDK makes of them.
 */
export interface RawPeer {
  readonly kind: 'stdio' | 'http';
  /** Every notification the server sent, in order. */
  readonly notifications: Message[];
  /** Every request the server sent, in order. */
  readonly serverRequests: Message[];
  onServerRequest: ServerRequestHandler | undefined;
  request(
    method: string,
    params?: Record<string, unknown>,
    options?: { id?: string | number; headers?: Record<string, string> },
  ): Promise<Response>;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Sends a raw message (anything, even invalid JSON-RPC) and returns the reply if one is expected. */
  sendRaw(body: string, expectReplyId?: string | number | null): Promise<Response | undefined>;
  initialize(capabilities?: Record<string, unknown>, protocolVersion?: string): Promise<Response>;
  close(): Promise<void>;
}

let nextId = 1;

/** Waits until `predicate` holds. */
export async function eventually<T>(probe: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface FixtureOptions {
  env?: Record<string, string>;
}

function fixtureEnv(options: FixtureOptions): NodeJS.ProcessEnv {
  return { ...process.env, MCP_TASKS_STORE: join(tempDir(), 'tasks.db'), ...options.env };
}

/** Common bookkeeping: pending requests, recorded messages, server-request answering. */
abstract class BasePeer implements RawPeer {
  abstract readonly kind: 'stdio' | 'http';
  readonly notifications: Message[] = [];
  readonly serverRequests: Message[] = [];
  onServerRequest: ServerRequestHandler | undefined;
  protected readonly pending = new Map<string | number, (response: Response) => void>();

  abstract request(
    method: string,
    params?: Record<string, unknown>,
    options?: { id?: string | number },
  ): Promise<Response>;
  abstract notify(method: string, params?: Record<string, unknown>): Promise<void>;
  abstract sendRaw(body: string, expectReplyId?: string | number | null): Promise<Response | undefined>;
  abstract close(): Promise<void>;
  protected abstract reply(message: Message): Promise<void>;

  async initialize(
    capabilities: Record<string, unknown> = { elicitation: {}, sampling: {} },
    protocolVersion = '2025-11-25',
  ): Promise<Response> {
    const response = await this.request('initialize', {
      protocolVersion,
      capabilities,
      clientInfo: { name: 'raw-wire-test', version: '1' },
    });
    await this.notify('notifications/initialized');
    return response;
  }

  protected dispatch(message: Message): void {
    if ('method' in message && message.id !== undefined && message.id !== null) {
      this.serverRequests.push(message);
      void this.answerServerRequest(message);
      return;
    }
    if ('method' in message) {
      this.notifications.push(message);
      return;
    }
    if (message.id !== undefined && message.id !== null) {
      const settle = this.pending.get(message.id);
      this.pending.delete(message.id);
      settle?.(message as Response);
    }
  }

  private async answerServerRequest(request: Message): Promise<void> {
    if (!this.onServerRequest) return;
    try {
      const result = await this.onServerRequest(request);
      await this.reply({ jsonrpc: '2.0', id: request.id, result });
    } catch (error) {
      await this.reply({ jsonrpc: '2.0', id: request.id, error: { code: -32000, message: String(error) } });
    }
  }
}

/** A stdio peer: the fixture server as a child process, one JSON message per line. */
export class StdioPeer extends BasePeer {
  readonly kind = 'stdio';
  private buffer = '';
  // Decodes across chunk boundaries: a character split between two reads stays whole.
  private readonly decoder = new StringDecoder('utf8');

  private constructor(readonly child: ChildProcess) {
    super();
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffer += this.decoder.write(chunk);
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, newline).trim();
        this.buffer = this.buffer.slice(newline + 1);
        if (line) this.dispatch(JSON.parse(line) as Message);
      }
    });
  }

  static async start(options: FixtureOptions & { stderr?: 'pipe' } = {}): Promise<StdioPeer> {
    const child = spawn(process.execPath, [FIXTURE, '--stdio'], {
      env: fixtureEnv(options),
      stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
    });
    return new StdioPeer(child);
  }

  request(method: string, params?: Record<string, unknown>, options: { id?: string | number } = {}): Promise<Response> {
    const id = options.id ?? nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.write({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
    });
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    this.write({ jsonrpc: '2.0', method, ...(params !== undefined && { params }) });
  }

  sendRaw(body: string, expectReplyId?: string | number | null): Promise<Response | undefined> {
    this.child.stdin?.write(`${body}\n`);
    if (expectReplyId === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => this.pending.set(expectReplyId ?? 'null', resolve));
  }

  protected async reply(message: Message): Promise<void> {
    this.write(message);
  }

  private write(message: Message): void {
    this.child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  protected override dispatch(message: Message): void {
    // Parse errors are answered with id null.
    if (message.id === null && 'error' in message) {
      const settle = this.pending.get('null');
      this.pending.delete('null');
      settle?.(message as Response);
      return;
    }
    super.dispatch(message);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin?.end();
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
}

/** A running fixture server on HTTP. */
export class HttpFixture {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(options: FixtureOptions = {}): Promise<HttpFixture> {
    const child = spawn(process.execPath, [FIXTURE], {
      env: { ...fixtureEnv(options), PORT: '0' },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(seen);
        if (match) resolve(match[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`fixture exited (${code}): ${seen}`)));
    });
    child.stderr?.resume();
    return new HttpFixture(child, url);
  }

  async peer(headers: Record<string, string> = {}): Promise<HttpPeer> {
    return new HttpPeer(this.url, headers);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** A Streamable HTTP peer: POSTs each message, reads JSON or SSE answers, keeps the session id. */
export class HttpPeer extends BasePeer {
  readonly kind = 'http';
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  private readonly streams = new Set<AbortController>();

  constructor(
    readonly url: string,
    readonly headers: Record<string, string> = {},
  ) {
    super();
  }

  private baseHeaders(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(this.sessionId && { 'mcp-session-id': this.sessionId }),
      ...(this.protocolVersion && { 'mcp-protocol-version': this.protocolVersion }),
      ...this.headers,
      ...extra,
    };
  }

  async request(
    method: string,
    params?: Record<string, unknown>,
    options: { id?: string | number; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const id = options.id ?? nextId++;
    const answer = new Promise<Response>((resolve) => this.pending.set(id, resolve));
    await this.post(
      JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) }),
      options.headers,
    );
    const response = await answer;
    if (method === 'initialize' && response.result) this.protocolVersion = String(response.result['protocolVersion']);
    return response;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    await this.post(JSON.stringify({ jsonrpc: '2.0', method, ...(params !== undefined && { params }) }));
  }

  async sendRaw(body: string, expectReplyId?: string | number | null): Promise<Response | undefined> {
    const answer =
      expectReplyId === undefined
        ? undefined
        : new Promise<Response>((resolve) => this.pending.set(expectReplyId ?? 'null', resolve));
    await this.post(body);
    return answer;
  }

  /** Opens the standalone GET stream on which the server sends unrelated notifications. */
  async openNotificationStream(): Promise<void> {
    const controller = new AbortController();
    this.streams.add(controller);
    const response = await fetch(this.url, {
      method: 'GET',
      headers: { ...this.baseHeaders(), accept: 'text/event-stream' },
      signal: controller.signal,
    });
    void this.consume(response).catch(() => {});
  }

  protected async reply(message: Message): Promise<void> {
    await this.post(JSON.stringify(message));
  }

  /** The HTTP status of the last POST, for transport-level assertions. */
  lastStatus = 0;

  private async post(body: string, headers?: Record<string, string>): Promise<void> {
    const controller = new AbortController();
    this.streams.add(controller);
    const response = await fetch(this.url, {
      method: 'POST',
      headers: this.baseHeaders(headers),
      body,
      signal: controller.signal,
    });
    this.lastStatus = response.status;
    const session = response.headers.get('mcp-session-id');
    if (session) this.sessionId = session;
    // The body is read in the background: an SSE answer may carry server requests before the response.
    void this.consume(response)
      .catch(() => {})
      .finally(() => this.streams.delete(controller));
  }

  private async consume(response: globalThis.Response): Promise<void> {
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('application/json')) {
      const parsed = (await response.json()) as Message | Message[];
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) this.deliver(message);
      return;
    }
    if (!type.includes('text/event-stream') || !response.body) {
      await response.text();
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data) this.deliver(JSON.parse(data) as Message);
      }
    }
  }

  private deliver(message: Message): void {
    if (message.id === null && 'error' in message) {
      const settle = this.pending.get('null');
      this.pending.delete('null');
      settle?.(message as Response);
      return;
    }
    this.dispatch(message);
  }

  async close(): Promise<void> {
    for (const controller of this.streams) controller.abort();
    this.streams.clear();
  }
}

/** Starts a peer of either kind against a fresh fixture server; `close` stops both. */
export async function startPeer(
  kind: 'stdio' | 'http',
  options: FixtureOptions = {},
): Promise<{ peer: RawPeer; close: () => Promise<void>; fixture?: HttpFixture }> {
  if (kind === 'stdio') {
    const peer = await StdioPeer.start(options);
    return { peer, close: () => peer.close() };
  }
  const fixture = await HttpFixture.start(options);
  const peer = await fixture.peer();
  return {
    peer,
    fixture,
    close: async () => {
      await peer.close();
      await fixture.close();
    },
  };
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-wire-test', version: '1' },
};

/** A 2026-07-28 peer: no session, the `_meta` envelope on every request, `Mcp-Method` / `Mcp-Name` headers. */
export class ModernPeer {
  private nextModernId = 1;
  /** Declared on every request unless a call says otherwise. */
  capabilities: Record<string, unknown> = {
    elicitation: { form: {} },
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  };

  constructor(
    readonly url: string,
    readonly headers: Record<string, string> = {},
  ) {}

  /** Sends one request and returns its JSON-RPC response (the last message of an SSE answer). */
  async request(
    method: string,
    params: Record<string, unknown> = {},
    options: { declare?: boolean; headers?: Record<string, string>; id?: string | number } = {},
  ): Promise<Response & { httpStatus: number }> {
    const declare = options.declare ?? true;
    const capabilities = declare ? this.capabilities : { ...this.capabilities, extensions: {} };
    const name =
      typeof params['taskId'] === 'string'
        ? params['taskId']
        : typeof params['name'] === 'string'
          ? params['name']
          : undefined;
    const id = options.id ?? this.nextModernId++;
    const response = await fetch(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(name !== undefined && { 'mcp-name': name }),
        ...this.headers,
        ...options.headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method,
        params: {
          ...params,
          _meta: {
            ...MODERN_META,
            'io.modelcontextprotocol/clientCapabilities': capabilities,
            ...(params['_meta'] as object),
          },
        },
      }),
    });
    const text = await response.text();
    const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => JSON.parse(line.slice(5)) as Message)
      : [JSON.parse(text) as Message];
    const reply = messages.find((m) => m.id === id) ?? messages.at(-1);
    return { ...(reply as Response), httpStatus: response.status };
  }

  /** Opens a `subscriptions/listen` stream and collects its notifications until `close()`. */
  async listen(
    notifications: Record<string, unknown>,
    declare = true,
  ): Promise<{ messages: Message[]; close(): void; first: Message | undefined }> {
    const controller = new AbortController();
    const capabilities = declare ? this.capabilities : { ...this.capabilities, extensions: {} };
    const response = await fetch(this.url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
        ...this.headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: `listen-${this.nextModernId++}`,
        method: 'subscriptions/listen',
        params: {
          notifications,
          _meta: { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': capabilities },
        },
      }),
    });
    const messages: Message[] = [];
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      messages.push((await response.json()) as Message);
      return { messages, first: messages[0], close: () => controller.abort() };
    }
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer
            .slice(0, boundary)
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          buffer = buffer.slice(boundary + 2);
          if (data) messages.push(JSON.parse(data) as Message);
        }
      }
    })().catch(() => {});
    await eventually(() => messages.length > 0);
    return { messages, first: messages[0], close: () => controller.abort() };
  }
}
