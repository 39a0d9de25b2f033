// Benchmark server: a bare Node `http` handler answering JSON-RPC `ping` — no MCP stack, the machine's limit.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const http = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown }).id ?? null;
    } catch {
      // A body that is not JSON still gets an answer: this server measures the floor, not validation.
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id, result: {} });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
http.listen(0, '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
);
process.on('SIGTERM', () => process.exit(0));
