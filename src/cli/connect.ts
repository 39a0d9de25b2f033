import { homedir } from 'node:os';
import { join } from 'node:path';

import {
  HandleStore,
  isDialectPreference,
  TaskClient,
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

function dialectOf(options: GlobalOptions, record: StoredHandle | undefined): DialectPreference {
  if (!isDialectPreference(options.dialect)) {
    throw new UsageError(`--dialect is auto, 2025-11-25, ext-2026 or sep-1686; got "${options.dialect}"`);
  }
  if (options.dialect !== 'auto' || record === undefined || record.dialect === 'none') return options.dialect;
  return record.dialect;
}

export function ttlOf(options: GlobalOptions): number | undefined {
  if (options.ttl === undefined) return undefined;
  const ttl = Number(options.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0)
    throw new UsageError(`--ttl is a positive number of milliseconds; got "${options.ttl}"`);
  return ttl;
}

/**
 * Connects as the command line asks; `taskId` lets a stored handle supply the server and session. Commands that
 * do not print the result keep the handle stored (`forgetSettled: false`) so `result` can still find the task.
 */
export async function openClient(
  options: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
  taskId?: string,
  forgetSettled = true,
): Promise<TaskClient> {
  const store = options.store === false ? undefined : new HandleStore(options.store);
  const record = taskId === undefined ? undefined : await store?.get(taskId);
  const target = targetOf(options, server, record);
  const ttlMs = ttlOf(options);
  const protocol = protocolOf(options.protocol);
  return TaskClient.connect(target, {
    clientInfo: { name: 'mcp-tasks-cli', version: '0.1.0' },
    dialect: dialectOf(options, record),
    ...(protocol !== undefined && { protocol }),
    ...(store !== undefined && { store, forgetSettled }),
    ...(ttlMs !== undefined && { ttlMs }),
    elicitation: (params, context) => reporter.elicit(params, context),
  });
}
