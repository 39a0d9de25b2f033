import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A test peer that speaks the raw wire of the two task generations our fixture server does not serve yet: the
 * `io.modelcontextprotocol/tasks` extension on the 2026-07-28 wire (TASKS-SPEC §3) and the SEP-1686 proposal
 * (§2). It is a server written from the spec text alone, over Streamable HTTP on 127.0.0.1, and it records every
 * message and header it receives so tests can assert the client's wire shapes; rule breaks land in `violations`.
 */

type Json = Record<string, unknown>;
type RpcError = { code: number; message: string; data?: unknown };

export type PeerMode = 'ext-2026' | 'sep-1686';

export interface Received {
  method?: string;
  id?: string | number;
  params?: Json;
  result?: unknown;
  error?: unknown;
  headers: Record<string, string | undefined>;
}

export interface PeerTask {
  taskId: string;
  tool: string;
  args: Json;
  status: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  result?: Json;
  error?: RpcError;
  /** Extension: outstanding input requests, keyed as on the wire. */
  inputRequests: Record<string, { method: string; params: Json }>;
  /** Extension: answered keys the peer keeps listing for a few polls (the spec allows eventual consistency). */
  lingering: Map<string, number>;
  answers: Map<string, Json>;
  waiters: Map<string, (answer: Json) => void>;
  /** SEP-1686: the original request's id and its open response stream. */
  requestId?: string | number;
  stream?: ServerResponse;
  cancelRequests: number;
}

const EXT = 'io.modelcontextprotocol/tasks';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const PROTOCOL = 'io.modelcontextprotocol/protocolVersion';
const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';
const CORE_RELATED = 'io.modelcontextprotocol/related-task';

const now = () => new Date().toISOString();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

class Cancelled extends Error {}

export class WirePeer {
  readonly received: Received[] = [];
  readonly violations: string[] = [];
  readonly tasks = new Map<string, PeerTask>();
  private readonly server: Server;
  private readonly pendingClientRequests = new Map<string, (message: Json) => void>();
  url = '';

  private constructor(
    readonly mode: PeerMode,
    private readonly options: { advertise: boolean; pollMs: number },
  ) {
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch((error: unknown) => {
        this.violations.push(`peer crashed: ${String(error)}`);
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
  }

  static async start(mode: PeerMode, options: { advertise?: boolean; pollMs?: number } = {}): Promise<WirePeer> {
    const peer = new WirePeer(mode, { advertise: options.advertise ?? true, pollMs: options.pollMs ?? 50 });
    peer.server.listen(0, '127.0.0.1');
    await once(peer.server, 'listening');
    const address = peer.server.address();
    peer.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp`;
    return peer;
  }

  async close(): Promise<void> {
    for (const task of this.tasks.values()) task.stream?.destroy();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }

  /** Requests the client sent, by method. */
  requests(method: string): Received[] {
    return this.received.filter((message) => message.method === method && message.id !== undefined);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
    );
    this.received.push({
      ...(typeof message['method'] === 'string' && { method: message['method'] }),
      ...(message['id'] !== undefined && { id: message['id'] as string | number }),
      ...(isObject(message['params']) && { params: message['params'] }),
      ...('result' in message && { result: message['result'] }),
      ...('error' in message && { error: message['error'] }),
      headers,
    });
    if (typeof message['method'] !== 'string') {
      // A response to one of our server-to-client requests (SEP-1686 elicitation).
      this.pendingClientRequests.get(String(message['id']))?.(message);
      response.writeHead(202).end();
      return;
    }
    if (message['id'] === undefined) {
      this.onNotification(message['method'], isObject(message['params']) ? message['params'] : {});
      response.writeHead(202).end();
      return;
    }
    const id = message['id'] as string | number;
    const params = isObject(message['params']) ? message['params'] : {};
    if (this.mode === 'ext-2026') await this.onExtRequest(id, message['method'], params, headers, response);
    else await this.onSepRequest(id, message['method'], params, request, response);
  }

  // ---------------------------------------------------------------- 2026 extension

  private async onExtRequest(
    id: string | number,
    method: string,
    params: Json,
    headers: Record<string, string | undefined>,
    response: ServerResponse,
  ): Promise<void> {
    const meta = isObject(params['_meta']) ? params['_meta'] : {};
    const declared =
      isObject(meta[CAPS]) && isObject((meta[CAPS] as Json)['extensions'])
        ? isObject(((meta[CAPS] as Json)['extensions'] as Json)[EXT])
        : false;
    if (method !== 'server/discover' && meta[PROTOCOL] !== '2026-07-28') {
      this.violations.push(`${method} without the 2026-07-28 envelope`);
    }
    if (headers['mcp-method'] !== undefined && headers['mcp-method'] !== method) {
      this.violations.push(`Mcp-Method ${headers['mcp-method']} on ${method}`);
    }
    if (method === 'server/discover') {
      return this.json(response, id, {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {}, ...(this.options.advertise && { extensions: { [EXT]: {} } }) },
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'wire-peer', version: '1.0.0' } },
      });
    }
    if (method.startsWith('tasks/')) {
      // spec E17
      if (headers['mcp-name'] !== params['taskId']) {
        this.violations.push(`Mcp-Name ${String(headers['mcp-name'])} on ${method} for ${String(params['taskId'])}`);
      }
      // spec E14: a non-declaring client gets -32021.
      if (!declared) {
        this.violations.push(`${method} without the extension declared`);
        return this.error(response, id, {
          code: -32021,
          message: 'Missing required client capability',
          data: { requiredCapabilities: { extensions: { [EXT]: {} } } },
        });
      }
    }
    if (method === 'tools/call') return this.extToolsCall(id, params, declared, response);
    if (method === 'tools/list') return this.json(response, id, { resultType: 'complete', tools: [] });
    const task = typeof params['taskId'] === 'string' ? this.tasks.get(params['taskId']) : undefined;
    if (method === 'tasks/result') {
      this.violations.push('tasks/result is not part of the extension');
      return this.error(response, id, { code: -32601, message: 'Method not found' });
    }
    if (method !== 'tasks/get' && method !== 'tasks/update' && method !== 'tasks/cancel') {
      return this.error(response, id, { code: -32601, message: 'Method not found' });
    }
    if (task === undefined) return this.error(response, id, { code: -32602, message: 'Task not found' });
    if (method === 'tasks/get') return this.json(response, id, this.detailedTask(task));
    if (method === 'tasks/update') {
      const responses = isObject(params['inputResponses']) ? params['inputResponses'] : {};
      for (const [key, answer] of Object.entries(responses)) {
        // spec E11: each key is answered once.
        if (task.answers.has(key)) this.violations.push(`input key ${key} answered twice`);
        if (!isObject(answer)) continue;
        task.answers.set(key, answer);
        if (key in task.inputRequests) {
          delete task.inputRequests[key];
          task.lingering.set(key, 2);
        }
        task.waiters.get(key)?.(answer);
      }
      // spec E12
      return this.json(response, id, { resultType: 'complete' });
    }
    task.cancelRequests++;
    this.onExtCancel(task);
    // spec E13
    return this.json(response, id, { resultType: 'complete' });
  }

  private async extToolsCall(
    id: string | number,
    params: Json,
    declared: boolean,
    response: ServerResponse,
  ): Promise<void> {
    const tool = String(params['name']);
    const args = isObject(params['arguments']) ? params['arguments'] : {};
    if (tool === 'mrtr') {
      const responses = isObject(params['inputResponses']) ? params['inputResponses'] : undefined;
      if (responses === undefined) {
        return this.json(response, id, {
          resultType: 'input_required',
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: 'Proceed?',
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
              },
            },
          },
          requestState: 'opaque-state-7',
        });
      }
      if (params['requestState'] !== 'opaque-state-7') this.violations.push('requestState not echoed byte for byte');
      args['confirmed'] = (responses['confirm'] as Json | undefined)?.['content'];
    }
    if (!declared) {
      // spec E1: no task for a request that did not declare the extension.
      if (tool === 'task_only') {
        return this.error(response, id, {
          code: -32021,
          message: 'Missing required client capability',
          data: { requiredCapabilities: { extensions: { [EXT]: {} } } },
        });
      }
      return this.json(response, id, { resultType: 'complete', ...text(`plain ${tool}`) });
    }
    if (tool === 'instant') return this.json(response, id, { resultType: 'complete', ...text('answered at once') });
    const task = this.createTask(tool, args);
    // spec E4: durably created before the CreateTaskResult goes out.
    this.json(response, id, { resultType: 'task', ...this.taskFields(task) });
    void this.runExt(task).catch((error: unknown) => {
      if (!(error instanceof Cancelled)) this.violations.push(`peer tool crashed: ${String(error)}`);
    });
  }

  private async runExt(task: PeerTask): Promise<void> {
    const args = task.args;
    switch (task.tool) {
      case 'sleepy':
      case 'task_only':
        await this.pause(task, Number(args['ms'] ?? 300));
        return this.complete(task, text(String(args['text'] ?? 'slept')));
      case 'ask': {
        await this.pause(task, 100);
        const answer = await this.askExt(task, 'q1', 'What is your name?', { name: { type: 'string' } });
        this.set(task, 'working', 'greeting');
        await this.pause(task, 100);
        return this.complete(task, text(`hello ${String((answer['content'] as Json | undefined)?.['name'])}`));
      }
      case 'ask_two': {
        await this.pause(task, 100);
        const [name, color] = await Promise.all([
          this.askExt(task, 'name', 'Name?', { name: { type: 'string' } }),
          this.askExt(task, 'color', 'Colour?', { color: { type: 'string' } }),
        ]);
        await this.pause(task, 50);
        const content = (answer: Json, key: string) => String((answer['content'] as Json | undefined)?.[key]);
        return this.complete(task, text(`${content(name, 'name')} likes ${content(color, 'color')}`));
      }
      case 'mrtr':
        await this.pause(task, 100);
        return this.complete(task, text(`confirmed ${JSON.stringify(args['confirmed'])}`));
      case 'fail_rpc':
        await this.pause(task, 100);
        return this.fail(task, { code: -32603, message: 'upstream refused', data: { retryable: false } });
      case 'fail_tool':
        await this.pause(task, 100);
        // spec E15: a tool error is a completed task carrying the error result.
        return this.complete(task, { ...text('the input data is corrupt'), isError: true });
      case 'stubborn':
      case 'race':
      case 'cancellable':
        await this.pause(task, Number(args['ms'] ?? 5000));
        return this.complete(task, text(`${task.tool} finished`));
      default:
        return this.fail(task, { code: -32602, message: `Unknown tool: ${task.tool}` });
    }
  }

  private onExtCancel(task: PeerTask): void {
    if (isTerminal(task.status)) return;
    if (task.tool === 'stubborn') return;
    if (task.tool === 'race') {
      // The work wins the race: the task completes instead of stopping.
      this.complete(task, text('race finished'));
      return;
    }
    // Cooperative and eventual (spec E13): cancelled a little later.
    setTimeout(() => {
      if (!isTerminal(task.status)) this.set(task, 'cancelled', 'Cancelled at the client’s request');
    }, 150);
  }

  private askExt(task: PeerTask, key: string, message: string, properties: Json): Promise<Json> {
    task.inputRequests[key] = {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message,
        requestedSchema: { type: 'object', properties, required: Object.keys(properties) },
      },
    };
    this.set(task, 'input_required', message);
    return new Promise<Json>((resolve) => task.waiters.set(key, resolve));
  }

  /** spec E8: the status-matching variant, listing every outstanding input request. */
  private detailedTask(task: PeerTask): Json {
    const detailed: Json = { resultType: 'complete', ...this.taskFields(task) };
    if (task.status === 'completed') detailed['result'] = task.result;
    if (task.status === 'failed') detailed['error'] = task.error;
    if (task.status === 'input_required') {
      const listed: Record<string, unknown> = { ...task.inputRequests };
      for (const [key, left] of task.lingering) {
        if (left <= 0) continue;
        task.lingering.set(key, left - 1);
        listed[key] = {
          method: 'elicitation/create',
          params: { mode: 'form', message: `(stale) ${key}`, requestedSchema: {} },
        };
      }
      detailed['inputRequests'] = listed;
    }
    return detailed;
  }

  private taskFields(task: PeerTask): Json {
    return {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: 60_000,
      pollIntervalMs: this.options.pollMs,
    };
  }

  // ---------------------------------------------------------------- SEP-1686

  private async onSepRequest(
    id: string | number,
    method: string,
    params: Json,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const meta = isObject(params['_meta']) ? params['_meta'] : {};
    if (method === 'initialize') {
      return this.json(response, id, {
        protocolVersion: String(params['protocolVersion']),
        capabilities: { tools: {} },
        serverInfo: { name: 'wire-peer-sep1686', version: '1.0.0' },
      });
    }
    if (method === 'ping') return this.json(response, id, {});
    if (method === 'tools/list') return this.json(response, id, { tools: [] });
    if (method === 'tools/call') return this.sepToolsCall(id, params, meta, request, response);
    if (method === 'tasks/list') {
      return this.json(response, id, {
        tasks: [...this.tasks.values()].map((task) => this.sepTask(task)),
      });
    }
    if (method !== 'tasks/get' && method !== 'tasks/result' && method !== 'tasks/delete') {
      return this.error(response, id, { code: -32601, message: 'Method not found' });
    }
    const related = isObject(meta[SEP_RELATED]) ? (meta[SEP_RELATED] as Json)['taskId'] : undefined;
    if (related !== params['taskId']) this.violations.push(`${method} without the SEP-1686 related-task _meta`);
    if (CORE_RELATED in meta) this.violations.push(`${method} with the 2025-11-25 related-task key`);
    const task = typeof params['taskId'] === 'string' ? this.tasks.get(params['taskId']) : undefined;
    if (task === undefined)
      return this.error(response, id, { code: -32602, message: 'Failed to retrieve task: Task not found' });
    const relatedMeta = { _meta: { [SEP_RELATED]: { taskId: task.taskId } } };
    if (method === 'tasks/get') return this.json(response, id, { ...this.sepTask(task), ...relatedMeta });
    if (method === 'tasks/delete') {
      this.tasks.delete(task.taskId);
      return this.json(response, id, relatedMeta);
    }
    // SEP-1686 §4.6: results only for completed tasks.
    if (task.status !== 'completed') {
      return this.error(response, id, {
        code: -32602,
        message: `Cannot retrieve result: Task status is '${task.status}', not 'completed'`,
      });
    }
    return this.json(response, id, { ...task.result, ...relatedMeta });
  }

  private async sepToolsCall(
    id: string | number,
    params: Json,
    meta: Json,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const tool = String(params['name']);
    const args = isObject(params['arguments']) ? params['arguments'] : {};
    const augmentation = isObject(meta[SEP_TASK]) ? (meta[SEP_TASK] as Json) : undefined;
    // A receiver without tasks for this request ignores the metadata (SEP-1686 §4.1).
    if (augmentation === undefined || tool === 'plain') return this.json(response, id, text(`plain ${tool}`));
    const taskId = augmentation['taskId'];
    if (typeof taskId !== 'string')
      return this.error(response, id, { code: -32602, message: 'taskId must be a string' });
    if (this.tasks.has(taskId)) {
      // SEP-1686 §7.1
      return this.error(response, id, { code: -32602, message: `Task ID already exists: ${taskId}` });
    }
    const task = this.createTask(tool, args, taskId, 'submitted');
    task.requestId = id;
    if (tool === 'drop_first') {
      // The connection drops before any answer; the task exists all the same.
      request.socket.destroy();
      void this.pause(task, 300).then(() => this.complete(task, text('survived a dropped connection')));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    task.stream = response;
    // SEP-1686 §3.4: the task exists and can be polled.
    this.sse(task, {
      jsonrpc: '2.0',
      method: 'notifications/tasks/created',
      params: { _meta: { [SEP_RELATED]: { taskId } } },
    });
    this.set(task, 'working');
    void this.runSep(task).catch((error: unknown) => {
      if (!(error instanceof Cancelled)) this.violations.push(`peer tool crashed: ${String(error)}`);
    });
  }

  private async runSep(task: PeerTask): Promise<void> {
    const args = task.args;
    switch (task.tool) {
      case 'sleepy':
        await this.pause(task, Number(args['ms'] ?? 300));
        return this.complete(task, text(String(args['text'] ?? 'slept')));
      case 'ask': {
        await this.pause(task, 100);
        // SEP-1686 §4.4: input_required while the associated request is outstanding.
        this.set(task, 'input_required');
        const answer = await this.requestClient(task, 'elicitation/create', {
          mode: 'form',
          message: 'What is your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          _meta: { [SEP_RELATED]: { taskId: task.taskId } },
        });
        this.set(task, 'working');
        await this.pause(task, 100);
        return this.complete(task, text(`hello ${String((answer['content'] as Json | undefined)?.['name'])}`));
      }
      case 'fail_rpc':
        await this.pause(task, 100);
        return this.fail(task, { code: -32603, message: 'upstream refused', data: { retryable: false } });
      case 'fail_tool':
        await this.pause(task, 100);
        return this.complete(task, { ...text('the input data is corrupt'), isError: true });
      case 'cancellable':
        await this.pause(task, Number(args['ms'] ?? 5000));
        return this.complete(task, text('cancellable finished'));
      default:
        return this.fail(task, { code: -32602, message: `Unknown tool: ${task.tool}` });
    }
  }

  private requestClient(task: PeerTask, method: string, params: Json): Promise<Json> {
    const id = `peer-${randomUUID()}`;
    return new Promise<Json>((resolve) => {
      this.pendingClientRequests.set(id, (message) => {
        this.pendingClientRequests.delete(id);
        resolve(isObject(message['result']) ? message['result'] : {});
      });
      this.sse(task, { jsonrpc: '2.0', id, method, params });
    });
  }

  private sepTask(task: PeerTask): Json {
    return {
      taskId: task.taskId,
      status: task.status,
      keepAlive: 30_000,
      pollFrequency: this.options.pollMs,
      ...(task.status === 'failed' && task.error !== undefined && { error: task.error.message }),
    };
  }

  private onNotification(method: string, params: Json): void {
    if (this.mode === 'ext-2026') {
      // spec E13: never for tasks.
      if (method === 'notifications/cancelled')
        this.violations.push('notifications/cancelled sent on the extension wire');
      return;
    }
    if (method !== 'notifications/cancelled') return;
    // SEP-1686 §4.8: the original request id names the task.
    const task = [...this.tasks.values()].find((candidate) => candidate.requestId === params['requestId']);
    if (task === undefined || isTerminal(task.status)) return;
    task.cancelRequests++;
    this.set(task, 'cancelled');
    task.stream?.end();
  }

  // ---------------------------------------------------------------- shared

  private createTask(tool: string, args: Json, taskId: string = randomUUID(), status = 'working'): PeerTask {
    const task: PeerTask = {
      taskId,
      tool,
      args,
      status,
      createdAt: now(),
      lastUpdatedAt: now(),
      inputRequests: {},
      lingering: new Map(),
      answers: new Map(),
      waiters: new Map(),
      cancelRequests: 0,
    };
    this.tasks.set(taskId, task);
    return task;
  }

  private set(task: PeerTask, status: string, statusMessage?: string): void {
    if (isTerminal(task.status)) return;
    task.status = status;
    if (statusMessage === undefined) delete task.statusMessage;
    else task.statusMessage = statusMessage;
    task.lastUpdatedAt = now();
  }

  private complete(task: PeerTask, result: Json): void {
    if (isTerminal(task.status)) return;
    task.result = result;
    this.set(task, 'completed');
    if (this.mode === 'sep-1686' && task.stream !== undefined) {
      // The original request still gets its normal response (SEP-1686 design).
      this.sse(task, { jsonrpc: '2.0', id: task.requestId, result });
      task.stream.end();
    }
  }

  private fail(task: PeerTask, error: RpcError): void {
    if (isTerminal(task.status)) return;
    task.error = error;
    this.set(task, 'failed', error.message);
    if (this.mode === 'sep-1686' && task.stream !== undefined) {
      this.sse(task, { jsonrpc: '2.0', id: task.requestId, error });
      task.stream.end();
    }
  }

  private async pause(task: PeerTask, ms: number): Promise<void> {
    const step = 25;
    for (let waited = 0; waited < ms; waited += step) {
      if (task.status === 'cancelled') throw new Cancelled();
      await sleep(Math.min(step, ms - waited));
    }
    if (task.status === 'cancelled') throw new Cancelled();
  }

  private sse(task: PeerTask, message: Json): void {
    if (task.stream === undefined || task.stream.writableEnded) return;
    task.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  private json(response: ServerResponse, id: string | number, result: Json): void {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
  }

  private error(response: ServerResponse, id: string | number, error: RpcError): void {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ jsonrpc: '2.0', id, error }));
  }
}

function isTerminal(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'unknown';
}
