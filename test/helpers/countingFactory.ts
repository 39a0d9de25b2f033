import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/** A server factory that counts its instances; its tools ask their requestor, report progress, or wait. */
export function countingFactory() {
  const counter = { instances: 0, closed: 0 };
  const factory = () => {
    counter.instances++;
    const server = new McpServer({ name: 'pooled', version: '1.0.0' });
    server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    server.registerTool('ask', { inputSchema: z.object({ question: z.string() }) }, async ({ question }, ctx) => {
      const schema = { type: 'object' as const, properties: { answer: { type: 'string' as const } } };
      const answer = await ctx.mcpReq.elicitInput({ message: question, requestedSchema: schema } as never);
      return { content: [{ type: 'text', text: `${question} → ${JSON.stringify(answer.content)}` }] };
    });
    server.registerTool('hang', { inputSchema: z.object({}) }, async (_args, ctx) => {
      await new Promise((resolve) => ctx.mcpReq.signal.addEventListener('abort', resolve));
      return { content: [{ type: 'text', text: 'stopped' }] };
    });
    const close = server.close.bind(server);
    server.close = async () => {
      counter.closed++;
      await close();
    };
    return server;
  };
  return { factory, counter };
}
