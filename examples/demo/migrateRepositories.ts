import { createHash } from 'node:crypto';

import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import type { ToolTaskPolicy } from 'mcp-tasks';
import { registerTask } from 'mcp-tasks/workflow';
import { sleep } from '../shared/sleep.js';

export const MIGRATE_POLICY: ToolTaskPolicy = { taskSupport: 'optional', pollIntervalMs: 1000, retrySafe: true };

const DEFAULT_REPOSITORIES = ['billing', 'checkout', 'inventory', 'search', 'accounts', 'shipping', 'reviews', 'auth'];

/**
 * `migrate_repositories`: a durable workflow, one journaled step per repository. Kill the server with kill -9 in
 * the middle and start it again: the task resumes with the next repository, and the result shows which process
 * migrated which repository (each one exactly once, except at most the one in flight at the crash).
 */
export function registerMigrateRepositories(server: McpServer): void {
  registerTask<{ repositories?: string[]; secondsPerRepository?: number }>(
    server,
    'migrate_repositories',
    {
      description:
        'Migrates each repository in turn (one durable step each; survives a restart of the server and resumes).',
      inputSchema: z.object({
        repositories: z.array(z.string().min(1).max(100)).max(100).optional(),
        secondsPerRepository: z.number().min(0).max(60).optional(),
      }),
    },
    async ({ repositories = DEFAULT_REPOSITORIES, secondsPerRepository = 3 }, step) => {
      const lines: string[] = [];
      for (const [index, repository] of repositories.entries()) {
        const done = await step.do(`migrate ${index} ${repository}`, async ({ signal }) => {
          await sleep(secondsPerRepository * 1000, signal);
          const commit = createHash('sha1').update(`${repository}:${Date.now()}`).digest('hex').slice(0, 10);
          return { commit, pid: process.pid };
        });
        lines.push(`${repository}: migrated in commit ${done.commit} by process ${done.pid}`);
        await step.status(`${index + 1} of ${repositories.length} repositories migrated (last: ${repository})`);
      }
      return { content: [{ type: 'text', text: lines.join('\n') }] };
    },
  );
}
