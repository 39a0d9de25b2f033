import { McpServer } from '@modelcontextprotocol/server';
import { registerTask } from 'mcp-tasks/workflow';
import * as z from 'zod';

export function createServer() {
  const server = new McpServer({ name: 'migrations', version: '1.0.0' });
  registerTask<{ repos: string[] }>(
    server,
    'migrate',
    { inputSchema: z.object({ repos: z.array(z.string()) }) },
    async ({ repos }, step) => {
      for (const [i, repo] of repos.entries()) {
        // Journaled: after a crash the task resumes here, and a completed step never runs again.
        await step.do(`migrate ${repo}`, { retries: { limit: 5, baseDelayMs: 2000 } }, () => migrate(repo));
        await step.status(`${i + 1} of ${repos.length} migrated`);
      }
      await step.sleep('let it settle', '10m'); // durable: the task holds no memory meanwhile
      const answer = await step.elicit('confirm', {
        method: 'elicitation/create',
        params: { message: 'Merge all?', requestedSchema: { type: 'object', properties: {} } },
      });
      return { content: [{ type: 'text', text: `merge: ${answer.action}` }] };
    },
  );
  return server;
}

async function migrate(repo: string): Promise<string> {
  return `migrated ${repo}`;
}
