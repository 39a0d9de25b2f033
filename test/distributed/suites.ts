import { randomUUID } from 'node:crypto';

import { requireService } from '../helpers/services.js';
import { postgresBackend, redisBackend, sqliteBackend, type StoreBackend } from './backends.js';

/** The queue's Redis (required by every distributed suite); undefined when the suites are skipped. */
export const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
export const postgresUrl = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');

export type BackendFactory = [name: string, open: () => Promise<StoreBackend>];

/**
 * The shared stores a suite runs on. Each suite gets its own Redis logical database (`redisDb`), so suites running
 * side by side never see each other's tasks.
 */
export function backends(redisDb: number, options: { sqlite?: boolean } = {}): BackendFactory[] {
  const list: BackendFactory[] = [];
  if (postgresUrl) list.push(['postgres', () => postgresBackend(postgresUrl)]);
  if (redisUrl) list.push(['redis', () => redisBackend(redisUrl, redisDb)]);
  if (options.sqlite) list.push(['sqlite', () => sqliteBackend()]);
  return list;
}

export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
