import { homedir } from 'node:os';
import { join } from 'node:path';

import {
  HandleStore,
  isDialectPreference,
  isHttpTarget,
  TaskClient,
  targetKey,
  type DialectPreference,
  type StoredHandle,
  type TaskTarget,
} from '../client/index.js';
import type { GlobalOptions } from './GlobalOptions.js';
import type { Reporter } from './Reporter.js';
import { UsageError } from './UsageError.js';

/** `$MCP_TASKS_HANDLES`, or a file in the home directory. */
export function defaultStorePath(): string {
  return process.env['MCP_TASKS_HANDLES'] ?? join(homedir(), '.mcp-tasks', 'handles.json');
}

function headersOf(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const pair of pairs) {
    const colon = pair.indexOf(':');
    if (colon <= 0) throw new UsageError(`Headers are "Name: value"; got "${pair}"`);
    headers[pair.slice(0, colon).trim()] = pair.slice(colon + 1).trim();
  }
  return headers;
}

function protocolOf(value: string | undefined): 'legacy' | 'auto' | '2026-07-28' | undefined {
  if (value === undefined || value === 'legacy' || value === 'auto' || value === '2026-07-28') return value;
  throw new UsageError(`--protocol is legacy, auto or 2026-07-28; got "${value}"`);
}

/**
 * The server to talk to: `--url`, or the command after `--`, or (for a task id this client stored) the server the
 * task was created on, with its session.
 */
function targetOf(options: GlobalOptions, server: string[] | undefined, record: StoredHandle | undefined): TaskTarget {
  const headers = headersOf(options.header);
  const session = (url: string) =>
    record?.endpoint.kind === 'http' && record.endpoint.url === new URL(url).href && record.sessionId !== undefined
      ? {
          sessionId: record.sessionId,
          ...(record.protocolVersion !== undefined && { protocolVersion: record.protocolVersion }),
        }
      : {};
  if (options.url !== undefined) {
    if (server !== undefined) throw new UsageError('Give either --url or a command after --, not both');
    try {
      return { url: new URL(options.url).href, ...(headers !== undefined && { headers }), ...session(options.url) };
    } catch (error) {
      if (error instanceof TypeError) throw new UsageError(`--url is not a URL: ${options.url}`);
      throw error;
    }
  }
  if (server !== undefined) {
    const [command, ...args] = server as [string, ...string[]];
    return {
      command,
      args,
      env: process.env as Record<string, string>,
      stderr: options.verbose === true ? 'inherit' : 'ignore',
    };
  }
  if (record !== undefined) {
    const endpoint = record.endpoint;
    if (endpoint.kind === 'http')
      return { url: endpoint.url, ...(headers !== undefined && { headers }), ...session(endpoint.url) };
    return {
      command: endpoint.command,
      args: endpoint.args,
      env: process.env as Record<string, string>,
      stderr: 'ignore',
    };
  }
  throw new UsageError('Say which server: --url <url>, or -- <command...> to start one over stdio');
}

/**
 * The dialect of this run: `--dialect`; else a stored task's own; else the one saved for the server on purpose
 * (`--save-dialect`); else `auto`. Nothing a run merely used carries over to the next.
 */
async function dialectOf(
  options: GlobalOptions,
  record: StoredHandle | undefined,
  saved: () => Promise<DialectPreference | undefined>,
): Promise<DialectPreference> {
  if (!isDialectPreference(options.dialect)) {
    throw new UsageError(`--dialect is auto, 2025-11-25, ext-2026 or sep-1686; got "${options.dialect}"`);
  }
  if (options.dialect !== 'auto') return options.dialect;
  if (record !== undefined && record.dialect !== 'none') return record.dialect;
  return (await saved()) ?? 'auto';
}

export function ttlOf(options: GlobalOptions): number | undefined {
  if (options.ttl === undefined) return undefined;
  const ttl = Number(options.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0)
    throw new UsageError(`--ttl is a positive number of milliseconds; got "${options.ttl}"`);
  return ttl;
}

/**
 * Connects as the command line asks; `taskId` lets a stored handle supply the server, session and dialect.
 *
 * Handles stay stored after their outcome is known, so `get`, `result` and `list` find any task the server still
 * holds (the store keeps the newest `DEFAULT_MAX_HANDLES`; `list` drops those the server no longer knows). On a
 * 2025-era HTTP server, where an unauthenticated caller's tasks belong to its session, every run reuses one session
 * per server and way of negotiating (kept in the store), so the server sees one owner across runs.
 */
export async function openClient(
  options: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
  taskId?: string,
): Promise<TaskClient> {
  return (await connectCli(options, server, reporter, taskId)).client;
}

/** `openClient`, with the handle store it uses and the server's `targetKey`. */
export async function connectCli(
  options: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
  taskId?: string,
): Promise<{ client: TaskClient; store: HandleStore | undefined; key: string }> {
  const store = options.store === false ? undefined : new HandleStore(options.store);
  const record = taskId === undefined ? undefined : await store?.get(taskId);
  let target = targetOf(options, server, record);
  const key = targetKey(target);
  const dialect = await dialectOf(options, record, async () => store?.savedDialect(key));
  const ttlMs = ttlOf(options);
  const protocol = protocolOf(options.protocol);
  const negotiation = protocol === undefined ? dialect : `${dialect} --protocol ${protocol}`;
  const identity =
    store !== undefined && isHttpTarget(target) && target.sessionId === undefined
      ? await store.session(key, negotiation)
      : undefined;
  if (identity !== undefined && isHttpTarget(target)) {
    target = {
      ...target,
      sessionId: identity.sessionId,
      ...(identity.protocolVersion !== undefined && { protocolVersion: identity.protocolVersion }),
    };
  }
  if (options.saveDialect === true) {
    if (store === undefined)
      throw new UsageError('--save-dialect keeps the dialect in the handle store: drop --no-store');
    await store.saveDialect(key, options.dialect as DialectPreference);
  }
  const client = await TaskClient.connect(target, {
    clientInfo: { name: 'mcp-tasks-cli', version: '0.1.0' },
    dialect,
    ...(protocol !== undefined && { protocol }),
    ...(store !== undefined && { store, forgetSettled: false, resumeStoredSession: false }),
    ...(ttlMs !== undefined && { ttlMs }),
    elicitation: (params, context) => reporter.elicit(params, context),
  });
  const sessionId = client.sessionId;
  if (
    store !== undefined &&
    record === undefined &&
    isHttpTarget(target) &&
    client.protocolEra === 'legacy' &&
    sessionId !== undefined &&
    sessionId !== identity?.sessionId
  ) {
    // A new session (the first, or the kept one had ended): the one later runs reuse.
    const protocolVersion = client.sdk.getNegotiatedProtocolVersion();
    const capabilities = client.serverCapabilities;
    await store.putSession({
      target: key,
      preference: negotiation,
      sessionId,
      ...(protocolVersion !== undefined && { protocolVersion }),
      ...(capabilities !== undefined && { serverCapabilities: capabilities as Record<string, unknown> }),
      storedAt: new Date().toISOString(),
    });
  }
  return { client, store, key };
}
