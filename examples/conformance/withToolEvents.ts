import { appendFileSync } from 'node:fs';

import { ProtocolError, type Server } from '@modelcontextprotocol/server';

import { createFixtureServer, FIXTURE_TOOLS } from './fixtureTools.js';

/**
 * The fixture server, with every tools/call recorded in `path`: shows in tests which process ran a tool and that a
 * cancellation reached the tool's own AbortSignal.
 */
export function withToolEvents(path: string): () => Server {
  const record = (entry: Record<string, unknown>) =>
    appendFileSync(path, `${JSON.stringify({ ...entry, pid: process.pid, time: Date.now() })}\n`);
  return () => {
    const server = createFixtureServer();
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const tool = FIXTURE_TOOLS[request.params.name];
      if (!tool) throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
      const entry = { tool: request.params.name, arguments: request.params.arguments ?? {} };
      record({ ...entry, event: 'start' });
      ctx.mcpReq.signal.addEventListener('abort', () => record({ ...entry, event: 'abort' }), { once: true });
      try {
        const result = await tool.run(request.params.arguments ?? {}, ctx);
        record({ ...entry, event: 'end' });
        return result as never;
      } catch (error) {
        record({ ...entry, event: 'error', error: String(error) });
        throw error;
      }
    });
    return server;
  };
}
