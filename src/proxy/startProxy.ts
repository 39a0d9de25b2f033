import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

import { isHttpTarget, type DialectPreference, type TaskTarget } from '../client/index.js';
import type { EngineLogger, TaskStore } from '../engine/index.js';
import {
  createMcpTasks,
  guardStdin,
  jwtAuth,
  serveHttp,
  type McpTasks,
  type McpTasksOptions,
} from '../server/index.js';
import { queueExecutor, runWorker, type WorkerHandle } from '../server/worker/index.js';
import { bridgedRecovery } from './bridgedRecovery.js';
import { CallAdmission } from './CallAdmission.js';
import { createProxyServerFactory } from './createProxyServer.js';
import { createProxyWork } from './createProxyWork.js';
import { toolRulesOf, type ProxyConfig } from './ProxyConfig.js';
import { ToolPolicies, type ToolRule } from './toolPolicies.js';
import { upstreamEnvironment } from './upstreamEnvironment.js';
import { UpstreamPool } from './UpstreamPool.js';

export interface ProxyOptions {
  /**
   * The server in front of which tasks are put: a command to spawn (stdio) or a Streamable HTTP URL. A stdio target
   * without `env` gets the safe default environment plus `config.upstream.env`, never the proxy's own.
   */
  upstream: TaskTarget;
  /** The tasks generation spoken to the upstream (default `auto`; SEP-1686 must be named, it has no negotiation). */
  upstreamDialect?: DialectPreference;
  /** Serve Streamable HTTP (default 127.0.0.1:3000, port 0 picks one) or stdio. */
  serve: { kind: 'http'; port?: number; host?: string } | { kind: 'stdio' };
  /**
   * Task store spec (SQLite path, `memory`, `postgres://…`, `redis://…`), or a store opened by the caller (the one
   * webhook deliveries in `events` are built over). Default `./mcp-tasks.db`.
   */
  store?: string | TaskStore;
  /** With Redis, tasks go on a BullMQ queue and every proxy (this one too) runs queued tasks. */
  queue?: { redisUrl: string; queueName?: string; workerConcurrency?: number };
  /** From `--tools`; applied after the config file's rules. */
  tools?: ToolRule[];
  config?: ProxyConfig;
  /**
   * How the upstream's events are served (docs/proxy.md, "Events"): stream limits, webhook delivery. The types are
   * the upstream's; without any to pass through, the proxy serves no Events and this is unused.
   */
  events?: Omit<NonNullable<McpTasksOptions['events']>, 'types'>;
  logger?: EngineLogger;
}

export interface RunningProxy {
  url?: string;
  /** Opens the console with its token, when `config.console` is set. */
  consoleUrl?: string;
  tasks: McpTasks;
  /** The upstream connections, one per caller. */
  upstreams: UpstreamPool;
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'mcp-tasks-proxy', version: '0.1.0' };
const silent: EngineLogger = { info() {}, warn() {}, error() {} };

/** Starts a proxy: connects the upstream, opens the store, recovers tasks and serves. */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const config = options.config ?? {};
  const logger = options.logger ?? silent;
  const { env: envNames, maxConnections, idleMs, connectionWaitMs, ...admission } = config.upstream ?? {};
  const target =
    isHttpTarget(options.upstream) || options.upstream.env !== undefined
      ? options.upstream
      : { ...options.upstream, env: upstreamEnvironment(envNames ?? []) };
  const upstreams = await UpstreamPool.connect({
    target,
    logger,
    ...(config.restart && { restart: config.restart }),
    ...(options.upstreamDialect !== undefined && { dialect: options.upstreamDialect }),
    ...(maxConnections !== undefined && { maxConnections }),
    ...(idleMs !== undefined && { idleMs }),
    ...(connectionWaitMs !== undefined && { connectionWaitMs }),
  });
  const policies = new ToolPolicies(toolRulesOf(config, options.tools ?? []));
  const info = upstreams.serverInfo
    ? { ...SERVER_INFO, name: `${SERVER_INFO.name} (${upstreams.serverInfo.name})` }
    : SERVER_INFO;
  let factory;
  try {
    factory = createProxyServerFactory(upstreams, policies, info, new CallAdmission(admission));
  } catch (error) {
    await upstreams.close();
    throw error;
  }
  let worker: WorkerHandle | undefined;
  let tasks: McpTasks;
  try {
    const engine = { ...config.engine, recoveryPolicy: bridgedRecovery() };
    tasks = await createMcpTasks({
      server: factory,
      tools: (name) => policies.policyFor(name),
      work: (taskEngine, hooks) => createProxyWork(upstreams, policies, taskEngine, hooks, logger),
      store: options.store ?? './mcp-tasks.db',
      engine,
      logger,
      ...(options.queue && {
        executor: queueExecutor({
          redisUrl: options.queue.redisUrl,
          ...(options.queue.queueName !== undefined && { queueName: options.queue.queueName }),
        }),
      }),
      ...(config.limits && { limits: config.limits }),
      ...(config.rateLimit !== undefined && { rateLimit: config.rateLimit }),
      ...(config.bindToSession !== undefined && { bindToSession: config.bindToSession }),
      ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
      ...(config.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: config.defaultPollIntervalMs }),
      // Hosts without tasks get the task_* tools unless the config turns them off.
      fallbackTools: config.fallbackTools ?? true,
      ...(config.fallbackAfterMs !== undefined && { fallbackAfterMs: config.fallbackAfterMs }),
      // Events are declared only when there is something of the upstream's to pass through.
      ...(upstreams.eventTypes.length > 0 && { events: { ...options.events, types: upstreams.eventTypes } }),
    });
    if (options.queue) {
      worker = await runWorker({
        server: factory,
        work: (workerEngine) => createProxyWork(upstreams, policies, workerEngine, {}, logger),
        ...(upstreams.eventTypes.length > 0 && { events: { types: upstreams.eventTypes } }),
        store: options.store ?? './mcp-tasks.db',
        redisUrl: options.queue.redisUrl,
        engine,
        logger,
        ...(options.queue.queueName !== undefined && { queueName: options.queue.queueName }),
        ...(options.queue.workerConcurrency !== undefined && { concurrency: options.queue.workerConcurrency }),
      });
    }
  } catch (error) {
    await upstreams.close();
    throw error;
  }
  const shutdown = async (closeServing: () => Promise<void>) => {
    await closeServing();
    await worker?.close({ timeoutMs: 0 });
    await tasks.close();
    await upstreams.close();
  };
  if (options.serve.kind === 'stdio') {
    const server = tasks.attach(await factory({ era: 'legacy' }));
    await server.connect(new StdioServerTransport(guardStdin(process.stdin, process.stdout), process.stdout));
    return { tasks, upstreams, close: () => shutdown(() => server.close()) };
  }
  const http = await serveHttp(tasks, {
    port: options.serve.port ?? 3000,
    host: options.serve.host ?? '127.0.0.1',
    // The proxy's handlers never read `ctx.http.req`.
    fastPath: { webRequest: false },
    ...config.http,
    ...(config.auth?.jwt && jwtAuth(config.auth.jwt)),
    ...(config.console && { console: config.console }),
  });
  const consoleUrl = http.console?.openUrl(new URL(http.url).origin);
  return {
    url: http.url,
    ...(consoleUrl && { consoleUrl }),
    tasks,
    upstreams,
    close: () => shutdown(() => http.close()),
  };
}
