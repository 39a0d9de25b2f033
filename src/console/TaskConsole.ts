import { hostHeaderValidationResponse, originValidationResponse } from '@modelcontextprotocol/server';

import {
  TaskEngine,
  type ExecutorLoad,
  type TaskBrowseStore,
  type TaskStatus,
  type TaskStore,
} from '../engine/index.js';
import { consoleAsset } from './assets/consoleAssets.js';
import { ConsoleActions, type ConsoleAuditRecord } from './ConsoleActions.js';
import { CONSOLE_COOKIE, ConsoleAuth, type ConsoleRole } from './consoleAuth.js';
import { ConsoleRefusal } from './ConsoleRefusal.js';
import { exportTasks } from './exportTasks.js';
import { FailureThrottle } from './FailureThrottle.js';
import { LiveStreams } from './LiveStreams.js';
import { readOverview, type Overview, type QueueStats } from './overview.js';
import { QueueDepthHistory } from './QueueDepthHistory.js';
import { readJsonBody } from './readJsonBody.js';
import { readOwners, type Owners } from './readOwners.js';
import { readSubscriptions, type Subscriptions } from './readSubscriptions.js';
import { readTaskDeliveries } from './readTaskDeliveries.js';
import { readTaskEvents } from './readTaskEvents.js';
import { parseTaskQuery, QueryError, readTaskPage } from './TaskQuery.js';
import { detailOf } from './taskViews.js';

export interface ConsoleOptions {
  /** Where the console is served. Default `/console`. */
  path?: string;
  /** The admin token (sees everything, may cancel). Default: `MCP_TASKS_CONSOLE_TOKEN`, else generated at start. */
  token?: string;
  /** A token that sees everything and changes nothing. Default: `MCP_TASKS_CONSOLE_READONLY_TOKEN`. */
  readonlyToken?: string;
  /** Host names accepted in the Host header. Default: localhost names. */
  allowedHostnames?: string[];
  /** Origins' host names accepted from a browser. Default: the allowed Host names. */
  allowedOrigins?: string[];
  /** The queue executor's depth and live workers, for the overview. */
  queueStats?: () => Promise<QueueStats>;
  /** The in-process executor's load: its waiting tasks are the queue the owners view charts. */
  load?: () => ExecutorLoad;
  /** Tasks per list page. Default 50. */
  pageSize?: number;
  /** How often live streams re-read what they show. Default 1 s. */
  refreshMs?: number;
  /** Live streams open at once. Default 100; the read-only token may hold at most half of them. */
  maxStreams?: number;
  /** Failed logins (a wrong token or cookie) one client address may make before it gets 429. Default 10 a minute. */
  failedLogins?: { max?: number; windowMs?: number };
  /**
   * Receives every action taken from the console (cancel, answer, re-run), besides the task's own timeline entry.
   * Default: none.
   */
  audit?: (record: ConsoleAuditRecord) => void;
}

const LOCALHOST = ['localhost', '127.0.0.1', '[::1]'];
const COUNTS_TTL_MS = 1000;
const OVERVIEW_TTL_MS = 5000;

/**
 * The operator's console: a page and its JSON API over one engine's store, across owners. Everything under its
 * path needs a console token; `fetch` answers undefined for other paths.
 */
export class TaskConsole {
  readonly path: string;
  private readonly auth: ConsoleAuth;
  private readonly streams: LiveStreams;
  private readonly throttle: FailureThrottle;
  private readonly actions: ConsoleActions;
  private readonly queueDepth: QueueDepthHistory;
  private overviewCache: { at: number; value: Promise<Overview> } | undefined;
  private refreshing: Promise<Overview> | undefined;
  private countsCache: { at: number; value: Promise<Partial<Record<TaskStatus, number>>> } | undefined;
  private ownersCache: { at: number; value: Promise<Owners> } | undefined;
  private subscriptionsCache: { at: number; value: Promise<Subscriptions> } | undefined;

  constructor(
    /** Its engine: the runtime's, or for `overStore` one of its own (whose appends a caller may publish). */
    readonly engine: TaskEngine,
    private readonly options: ConsoleOptions = {},
    /** False over a store no runtime of this process runs: a re-run would never start there. */
    runsTasks = true,
  ) {
    this.actions = new ConsoleActions(engine, runsTasks, options.audit ?? (() => {}));
    this.path = (options.path ?? '/console').replace(/\/+$/, '') || '/console';
    this.auth = new ConsoleAuth({
      token: options.token ?? process.env['MCP_TASKS_CONSOLE_TOKEN'],
      readonlyToken: options.readonlyToken ?? process.env['MCP_TASKS_CONSOLE_READONLY_TOKEN'],
    });
    this.throttle = new FailureThrottle({
      ...(options.failedLogins?.max !== undefined && { maxFailures: options.failedLogins.max }),
      ...(options.failedLogins?.windowMs !== undefined && { windowMs: options.failedLogins.windowMs }),
    });
    this.streams = new LiveStreams({
      refreshMs: options.refreshMs ?? 1000,
      maxStreams: options.maxStreams ?? 100,
      list: (params) => this.list(params),
      task: (taskId) => this.task(taskId),
    });
    this.queueDepth = new QueueDepthHistory(
      {
        ...(options.queueStats && { queueStats: options.queueStats }),
        ...(options.load && { load: options.load }),
      },
      () => engine.clock.now(),
    );
    this.queueDepth.start();
  }

  /**
   * A console over a store no runtime of this process uses (`mcp-tasks console`): an engine that only reads and
   * cancels, with no sweeps, recovery or timers of its own (the servers and workers on the store run those).
   */
  static async overStore(store: TaskStore, options: ConsoleOptions = {}): Promise<TaskConsole> {
    await store.init();
    await store.timeline?.init();
    await store.browse?.init();
    await store.eventLog?.init();
    await store.webhooks?.init();
    // A cancel from here appends the task's status entry as a server's engine would, so an `events/*` reader of the
    // runtime's task status type on any instance sees it (spec TS8).
    const engine = new TaskEngine({
      store,
      sweepIntervalMs: 0,
      recoveryIntervalMs: 0,
      wakeIntervalMs: 0,
      statusEvents: true,
    });
    return new TaskConsole(engine, options, false);
  }

  /** The admin token (generated when none was given). */
  get token(): string {
    return this.auth.adminToken;
  }

  /** A URL that opens the console once and leaves a cookie, for `origin` (e.g. `http://127.0.0.1:3000`). */
  openUrl(origin: string): string {
    return `${origin}${this.path}/?token=${encodeURIComponent(this.token)}`;
  }

  owns(pathname: string): boolean {
    return pathname === this.path || pathname.startsWith(`${this.path}/`);
  }

  close(): void {
    this.streams.close();
    this.queueDepth.stop();
  }

  /** `remoteAddress`: the client's, for the failed-login throttle (requests without one share a single count). */
  async fetch(request: Request, info: { remoteAddress?: string } = {}): Promise<Response | undefined> {
    const url = new URL(request.url);
    if (!this.owns(url.pathname)) return undefined;
    const hosts = this.options.allowedHostnames ?? LOCALHOST;
    const refused =
      hostHeaderValidationResponse(request, hosts) ??
      originValidationResponse(request, this.options.allowedOrigins ?? hosts);
    if (refused) return plain(403, 'Forbidden');
    const address = info.remoteAddress ?? 'unknown';
    const wait = this.throttle.retryAfter(address);
    if (wait !== undefined) return tooManyFailures(wait);
    const presented = url.searchParams.get('token');
    if (presented !== null) return this.exchange(url, presented, address);
    const role = this.auth.roleOf(request);
    if (!role) {
      if (this.auth.presents(request)) this.throttle.fail(address);
      return unauthorized();
    }
    try {
      return await this.route(request, url, role, address);
    } catch (error) {
      if (error instanceof QueryError) return json(400, { error: error.message });
      if (error instanceof ConsoleRefusal) return json(error.status, { error: error.message });
      throw error;
    }
  }

  /** `?token=`: a valid token becomes a cookie and the URL loses it; anything else is refused like no token. */
  private exchange(url: URL, token: string, address: string): Response {
    const role = this.auth.roleOfToken(token);
    if (!role) {
      this.throttle.fail(address);
      return unauthorized();
    }
    url.searchParams.delete('token');
    const pathname = url.pathname === this.path ? `${this.path}/` : url.pathname;
    const cookie = `${CONSOLE_COOKIE}=${this.auth.cookieFor(role)}; Path=${this.path}; HttpOnly; SameSite=Strict`;
    return new Response(null, {
      status: 303,
      headers: { location: `${pathname}${url.search}`, 'set-cookie': cookie, 'cache-control': 'no-store' },
    });
  }

  private async route(request: Request, url: URL, role: ConsoleRole, address: string): Promise<Response> {
    const rest = url.pathname.slice(this.path.length);
    // The page's relative URLs (app.js, api/...) resolve under the trailing slash.
    if (rest === '') return new Response(null, { status: 308, headers: { location: `${this.path}/${url.search}` } });
    if (request.method === 'GET' && rest === '/') return asset('index.html');
    if (request.method === 'GET' && (rest === '/app.js' || rest === '/app.css')) return asset(rest.slice(1));
    if (request.method === 'GET' && rest === '/api/session') return json(200, { role });
    if (request.method === 'GET' && rest === '/api/tasks') return json(200, await this.list(url.searchParams));
    if (request.method === 'GET' && rest === '/api/export')
      return exportTasks(this.browse(), url.searchParams, this.engine.clock.now());
    if (request.method === 'GET' && rest === '/api/overview') return json(200, await this.overview(OVERVIEW_TTL_MS));
    if (request.method === 'GET' && rest === '/api/owners') return json(200, await this.owners());
    if (request.method === 'GET' && rest === '/api/subscriptions') return json(200, await this.subscriptions());
    if (request.method === 'GET' && rest === '/api/stream')
      return this.streams.open(url.searchParams, request.signal, role);
    if (rest === '/api/cancel') {
      if (request.method !== 'POST') return json(405, { error: 'method not allowed' });
      authorise(request, role);
      const { taskIds } = await readJsonBody(request);
      return json(200, await this.actions.cancelMany(taskIds, address));
    }
    const task = /^\/api\/tasks\/([^/]+)(?:\/(cancel|answer|rerun))?$/.exec(rest);
    if (task) {
      const taskId = decodedSegment(task[1] as string);
      // A malformed escape names no task.
      if (taskId === undefined) return json(404, { error: 'no such task' });
      const action = task[2];
      if (!action && request.method === 'GET') {
        const found = await this.task(taskId);
        return found ? json(200, found) : json(404, { error: 'no such task' });
      }
      if (!action || request.method !== 'POST') return json(405, { error: 'method not allowed' });
      authorise(request, role);
      if (action === 'cancel') await this.actions.cancel(taskId, address);
      else if (action === 'answer') await this.actions.answer(taskId, await readJsonBody(request), address);
      else return json(200, { taskId: await this.actions.rerun(taskId, address) });
      return json(200, await this.task(taskId));
    }
    return json(404, { error: 'not found' });
  }

  private browse(): TaskBrowseStore {
    const browse = this.engine.store.browse;
    if (!browse) throw new QueryError(`the ${this.engine.store.kind} store cannot list tasks across owners`);
    return browse;
  }

  private async list(params: URLSearchParams) {
    const query = parseTaskQuery(params, this.options.pageSize ?? 50);
    const [page, counts] = await Promise.all([
      readTaskPage(this.browse(), query, this.engine.clock.now()),
      this.counts(),
    ]);
    return { ...page, counts, now: this.engine.clock.now() };
  }

  /** Counts by status, shared by every request for a second (they read every task's status index entry). */
  private counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const now = this.engine.clock.now();
    if (!this.countsCache || now - this.countsCache.at > COUNTS_TTL_MS) {
      const value = this.browse().counts();
      this.countsCache = { at: now, value };
      value.catch(() => (this.countsCache = undefined));
    }
    return this.countsCache.value;
  }

  /** The owners view, shared by every request for as long as the overview (it reads up to 6,000 tasks). */
  private owners(): Promise<Owners> {
    const now = this.engine.clock.now();
    if (!this.ownersCache || now - this.ownersCache.at > OVERVIEW_TTL_MS) {
      const { store } = this.engine;
      const value = readOwners(this.browse(), now, {
        ...(store.storedBytesOf && { storedBytesOf: store.storedBytesOf.bind(store) }),
        refusedOwners: () => this.engine.refusedOwners(),
        ...(this.queueDepth.available && { queueDepth: () => this.queueDepth.lastHour() }),
      });
      this.ownersCache = { at: now, value };
      value.catch(() => (this.ownersCache = undefined));
    }
    return this.ownersCache.value;
  }

  /** The subscriptions page, shared by every request for as long as the owners view (it reads owner by owner). */
  private subscriptions(): Promise<Subscriptions> {
    const now = this.engine.clock.now();
    if (!this.subscriptionsCache || now - this.subscriptionsCache.at > OVERVIEW_TTL_MS) {
      const value = readSubscriptions(this.browse(), this.engine.store.webhooks, now);
      this.subscriptionsCache = { at: now, value };
      value.catch(() => (this.subscriptionsCache = undefined));
    }
    return this.subscriptionsCache.value;
  }

  /**
   * The overview, shared by every request: once older than `maxAgeMs` it is read again in the background while
   * requests get the previous one, so no page waits for the counts (they read every task's index entry).
   */
  private overview(maxAgeMs = COUNTS_TTL_MS): Promise<Overview> {
    const now = this.engine.clock.now();
    const cached = this.overviewCache;
    if (cached && now - cached.at <= maxAgeMs) return cached.value;
    if (this.refreshing) return cached ? cached.value : this.refreshing;
    const value = readOverview(this.browse(), now, this.options.queueStats);
    this.refreshing = value;
    value
      .then(
        () => (this.overviewCache = { at: now, value }),
        () => undefined,
      )
      .finally(() => (this.refreshing = undefined));
    return cached ? cached.value : value;
  }

  private async task(taskId: string) {
    const record = await this.engine.store.get(taskId);
    if (!record || this.engine.isExpired(record, this.engine.clock.now())) return undefined;
    const { store } = this.engine;
    // Beside the timeline: what the task's work emitted and where its events are delivered (none where unsupported).
    const [timeline, events, webhooks] = await Promise.all([
      this.engine.timeline(record.owner, taskId).catch(() => []),
      readTaskEvents(store.eventLog, taskId).catch(() => undefined),
      readTaskDeliveries(store.webhooks, record.owner, taskId).catch(() => undefined),
    ]);
    return { task: detailOf(record), timeline, events, webhooks, now: this.engine.clock.now() };
  }
}

/** Actions need the admin token and the page's own header: a form on a foreign page cannot set it. */
function authorise(request: Request, role: ConsoleRole): void {
  if (role !== 'admin') throw new ConsoleRefusal(403, 'this token is read-only');
  if (request.headers.get('x-console-request') !== '1') throw new ConsoleRefusal(403, 'not from the console');
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function asset(name: string): Response {
  const { body, type } = consoleAsset(name);
  return new Response(body, {
    headers: {
      ...SECURITY_HEADERS,
      'content-type': type,
      // Nothing is loaded from anywhere but the console itself.
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...SECURITY_HEADERS, 'content-type': 'application/json' },
  });
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { ...SECURITY_HEADERS, 'content-type': 'text/plain' } });
}

function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function tooManyFailures(retryAfterSeconds: number): Response {
  const response = plain(429, 'Too many failed logins; try again later');
  response.headers.set('retry-after', String(retryAfterSeconds));
  return response;
}

function unauthorized(): Response {
  const response = plain(401, 'Unauthorized');
  response.headers.set('www-authenticate', 'Bearer realm="mcp-tasks console"');
  return response;
}
