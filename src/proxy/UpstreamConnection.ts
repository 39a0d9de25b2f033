import {
  TaskClient,
  TaskConnectionError,
  isHttpTarget,
  type DialectPreference,
  targetKey,
  type InputContext,
  type TaskTarget,
} from '../client/index.js';
import type { EngineLogger } from '../engine/index.js';
import { CORE_PROTOCOL_VERSION } from '../protocol/index.js';
import type { UpstreamNotification, UpstreamRoutes } from './UpstreamRoutes.js';

export interface UpstreamOptions {
  target: TaskTarget;
  logger: EngineLogger;
  /** Restart backoff of a stdio upstream that exited: doubles from `initialDelayMs` up to `maxDelayMs`. */
  restart?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * The tasks generation spoken to the upstream. `auto` (default) negotiates 2025-11-25 or the 2026 extension;
   * SEP-1686 has no negotiation, so an upstream that serves it is named here.
   */
  dialect?: DialectPreference;
  clientInfo?: { name: string; version: string };
}

/** A connection that lived this long before it dropped was healthy: the backoff starts over. */
const HEALTHY_MS = 10_000;

/**
 * The life of one upstream connection, over the project's TaskClient: connecting, a stdio upstream that exits
 * restarted with backoff (an HTTP one reconnected on the next call), and the extra clients resumed on older upstream
 * sessions. What the upstream sends on its own (questions, notifications) goes to its routes.
 */
export class UpstreamConnection {
  private client: TaskClient | undefined;
  private connecting: Promise<TaskClient> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private connectedAt = 0;
  private restarted = false;
  private closing = false;
  private readonly sessions = new Map<string, { client: Promise<TaskClient>; users: number }>();

  constructor(
    private readonly options: UpstreamOptions,
    private readonly routes: UpstreamRoutes,
  ) {}

  get isStdio(): boolean {
    return !isHttpTarget(this.options.target);
  }

  get description(): string {
    return targetKey(this.options.target);
  }

  /** The client connected now, if any (a cache of the upstream's answers is valid while it stays this one). */
  get connected(): TaskClient | undefined {
    return this.client;
  }

  /** A connected client, waiting for a restart in progress. Throws TaskConnectionError when the upstream is down. */
  async current(): Promise<TaskClient> {
    if (this.closing) throw new TaskConnectionError('The proxy is shutting down');
    if (this.client) return this.client;
    if (this.connecting) return this.connecting;
    clearTimeout(this.restartTimer);
    return this.open();
  }

  /** A notification of the upstream, from its client or a direct call's stream, to the routes' listeners. */
  notify(notification: UpstreamNotification): void {
    this.routes.broadcast(notification);
  }

  /**
   * A client on a given upstream session, for following a task bound to it after a restart of the proxy: the
   * current connection when it is that session, else one resumed for it (released with the returned function).
   */
  async onSession(sessionId: string | undefined): Promise<{ client: TaskClient; release(): void }> {
    const current = await this.current();
    const target = this.options.target;
    if (sessionId === undefined || !isHttpTarget(target) || current.sessionId === sessionId)
      return { client: current, release() {} };
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      const client = TaskClient.connect(
        { ...target, sessionId, protocolVersion: current.sdk.getNegotiatedProtocolVersion() ?? CORE_PROTOCOL_VERSION },
        this.clientOptions(),
      );
      entry = { client, users: 0 };
      this.sessions.set(sessionId, entry);
      client.catch(() => this.sessions.delete(sessionId));
    }
    entry.users++;
    const held = entry;
    const client = await held.client;
    return {
      client,
      release: () => {
        if (--held.users > 0) return;
        this.sessions.delete(sessionId);
        void client.close();
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    for (const entry of this.sessions.values()) void entry.client.then((client) => client.close()).catch(() => {});
    this.sessions.clear();
    await this.client?.close();
    this.client = undefined;
  }

  private open(): Promise<TaskClient> {
    const connecting = TaskClient.connect(this.options.target, this.clientOptions()).then(
      (client) => {
        this.connecting = undefined;
        if (this.closing) {
          void client.close();
          throw new TaskConnectionError('The proxy is shutting down');
        }
        this.adopt(client);
        return client;
      },
      (error: unknown) => {
        this.connecting = undefined;
        if (this.isStdio && this.client === undefined && this.connectedAt > 0) this.scheduleRestart();
        throw new TaskConnectionError(
          `The upstream server (${this.description}) failed to connect: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      },
    );
    this.connecting = connecting;
    return connecting;
  }

  private clientOptions() {
    return {
      clientInfo: this.options.clientInfo ?? { name: 'mcp-tasks-proxy', version: '0.1.0' },
      ...(this.options.dialect !== undefined && { dialect: this.options.dialect }),
      elicitation: (params: Record<string, unknown>, context: InputContext) =>
        this.routes.route('elicitation/create', params, context) as never,
      sampling: (params: Record<string, unknown>, context: InputContext) =>
        this.routes.route('sampling/createMessage', params, context) as never,
      onError: (error: Error) => this.options.logger.warn({ error: error.message }, 'upstream connection error'),
    };
  }

  private adopt(client: TaskClient): void {
    this.client = client;
    this.connectedAt = Date.now();
    const sdk = client.sdk;
    sdk.fallbackNotificationHandler = async (notification) => this.notify(notification as UpstreamNotification);
    const previous = sdk.onclose;
    sdk.onclose = () => {
      previous?.();
      if (this.client !== client) return;
      this.client = undefined;
      if (this.closing) return;
      this.options.logger.warn({ upstream: this.description }, 'the upstream server closed the connection');
      if (Date.now() - this.connectedAt >= HEALTHY_MS) this.failures = 0;
      if (this.isStdio) this.scheduleRestart();
    };
    // The tool set may differ after a restart: downstream clients list again.
    if (this.failures > 0 || this.restarted) this.notify({ method: 'notifications/tools/list_changed' });
    this.restarted = true;
  }

  /** spec-independent: a crashed stdio server is started again after 0.5 s, 1 s, 2 s … up to 30 s. */
  private scheduleRestart(): void {
    if (this.closing || this.restartTimer?.hasRef() === true) return;
    const initial = this.options.restart?.initialDelayMs ?? 500;
    const max = this.options.restart?.maxDelayMs ?? 30_000;
    const delay = Math.min(initial * 2 ** this.failures, max);
    this.failures++;
    this.options.logger.warn({ upstream: this.description, delayMs: delay }, 'restarting the upstream server');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.client || this.connecting || this.closing) return;
      this.open().catch(() => {});
    }, delay);
  }
}
