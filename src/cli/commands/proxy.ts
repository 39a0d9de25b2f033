import { readFileSync } from 'node:fs';

import type { DialectPreference, TaskTarget } from '../../client/index.js';
import { parseProxyConfig, parseToolsOption, startProxy, type ProxyConfig } from '../../proxy/index.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { Reporter } from '../Reporter.js';
import { stderrLogger } from '../stderrLogger.js';
import { UsageError } from '../UsageError.js';
import { proxyWebhooks, type ProxyWebhooks } from './proxyWebhooks.js';

export interface ProxyCommandOptions {
  upstream?: string;
  upstreamHeader: string[];
  /** Variables a stdio upstream inherits besides the SDK's safe default set. */
  upstreamEnv: string[];
  upstreamDialect: DialectPreference;
  port: string;
  host: string;
  stdio?: boolean;
  store?: string;
  redis?: string;
  queue?: string;
  tools: string;
  config?: string;
  /** Serve the console at /console. */
  console?: boolean;
  /** Deliver events by webhook from the store's outbox. */
  webhooks?: boolean;
  /** Callback origins let past the https and public-address guards (implies webhooks). */
  webhookAllowOrigin?: string[];
  verbose?: boolean;
}

function headersOf(pairs: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of pairs) {
    const colon = pair.indexOf(':');
    if (colon <= 0) throw new UsageError(`--upstream-header is "Name: value"; got "${pair}"`);
    headers[pair.slice(0, colon).trim()] = pair.slice(colon + 1).trim();
  }
  return headers;
}

function upstreamOf(options: ProxyCommandOptions, server: string[] | undefined): TaskTarget {
  if (options.upstream !== undefined && server !== undefined)
    throw new UsageError('Give either --upstream <url> or a command after --, not both');
  if (options.upstream !== undefined) {
    let url: URL;
    try {
      url = new URL(options.upstream);
    } catch {
      throw new UsageError(`--upstream is not a URL: ${options.upstream}`);
    }
    const headers = headersOf(options.upstreamHeader);
    return { url: url.href, ...(Object.keys(headers).length > 0 && { headers }) };
  }
  if (server === undefined)
    throw new UsageError('Say which server to front: --upstream <url>, or -- <command...> to start one over stdio');
  if (options.upstreamHeader.length > 0) throw new UsageError('--upstream-header needs --upstream <url>');
  const [command, ...args] = server as [string, ...string[]];
  // No env here: the proxy gives the child the safe default set plus what --upstream-env names.
  return { command, args, stderr: 'inherit' };
}

function configOf(path: string | undefined): ProxyConfig {
  if (path === undefined) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--config: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseProxyConfig(JSON.parse(text));
  } catch (error) {
    throw new UsageError(`--config ${path}: ${(error as Error).message}`);
  }
}

/** Log lines on stderr: stdout carries the URL (HTTP) or the protocol (stdio). The fields may hold upstream text. */
/**
 * `proxy`: durable tasks in front of any MCP server. Serves Streamable HTTP (first line of stdout: the URL) or stdio
 * until SIGINT/SIGTERM.
 */
export async function runProxy(
  options: ProxyCommandOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const target = upstreamOf(options, server);
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port is 0-65535; got "${options.port}"`);
  let tools;
  try {
    tools = parseToolsOption(options.tools);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const config = configOf(options.config);
  if (options.console === true) config.console ??= {};
  if (options.upstreamEnv.length > 0) {
    if (options.upstream !== undefined) throw new UsageError('--upstream-env is for a stdio upstream (-- <command…>)');
    config.upstream = { ...config.upstream, env: [...(config.upstream?.env ?? []), ...options.upstreamEnv] };
  }
  const store = options.store ?? process.env['MCP_TASKS_STORE'];
  const redisUrl = options.redis ?? process.env['REDIS_URL'];
  const origins = options.webhookAllowOrigin ?? [];
  let delivery: ProxyWebhooks | undefined;
  let proxy;
  try {
    if (options.webhooks === true || origins.length > 0) delivery = await proxyWebhooks(store, origins);
    proxy = await startProxy({
      upstream: target,
      upstreamDialect: options.upstreamDialect,
      serve: options.stdio === true ? { kind: 'stdio' } : { kind: 'http', port, host: options.host },
      ...(delivery
        ? { store: delivery.store, events: { webhooks: delivery.webhooks } }
        : store !== undefined && { store }),
      ...(redisUrl !== undefined && {
        queue: { redisUrl, ...(options.queue !== undefined && { queueName: options.queue }) },
      }),
      tools,
      config,
      logger: stderrLogger('proxy', options.verbose === true),
    });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    await delivery?.store.close().catch(() => {});
    reporter.error(error);
    return EXIT_CODES.connection;
  }
  delivery?.webhooks.start();
  if (proxy.url !== undefined) process.stdout.write(`mcp-tasks proxy: ${proxy.url}\n`);
  if (proxy.consoleUrl !== undefined) reporter.note(`console: ${proxy.consoleUrl}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // Shutting down must not hang on an upstream that no longer answers.
  const closed = async () => {
    await delivery?.webhooks.stop();
    await proxy.close();
  };
  await Promise.race([closed(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
  return EXIT_CODES.completed;
}
