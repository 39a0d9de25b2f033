// Runs under Node 22 (what @ai-sdk/mcp requires): one plain tools/call from the AI SDK's MCP client, which speaks
// 2026-07-28 and does not declare the tasks extension. Usage: node aiSdkCall.mjs <url> <tool> <json args> <json answers>
// where answers is a list of ElicitResults handed out in order. Prints one JSON line: { protocolVersion, asked, result }
// or { error }.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// @ai-sdk/mcp is installed in tools/interop (it needs Node 22, so it stays out of the root install).
const interop = createRequire(new URL('../../../tools/interop/package.json', import.meta.url));
const { createMCPClient, ElicitationRequestSchema } = await import(pathToFileURL(interop.resolve('@ai-sdk/mcp')).href);

const [url, tool, args, answers] = process.argv.slice(2);
const queue = JSON.parse(answers ?? '[]');
const asked = [];
const client = await createMCPClient({
  transport: { type: 'http', url },
  clientName: 'ai-sdk-interop',
  capabilities: { elicitation: {} },
});
client.onElicitationRequest(ElicitationRequestSchema, (request) => {
  asked.push(request.params.message);
  return queue.shift() ?? { action: 'cancel' };
});
try {
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args ?? '{}') });
  process.stdout.write(`${JSON.stringify({ protocolVersion: client.protocolVersion ?? null, asked, result })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ asked, error: String(error?.message ?? error) })}\n`);
} finally {
  await client.close();
}
