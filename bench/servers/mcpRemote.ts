import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The locally installed `mcp-remote` (pinned in devDependencies), the stdio bridge desktop hosts put in front of HTTP servers. */
export const MCP_REMOTE_ENTRY = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');

export type JsonRpcReply = { id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** `mcp-remote <url>` spoken to over its stdio, as a host does: one JSON-RPC message per line. */
export interface McpRemote {
  child: ChildProcess;
  /** Milliseconds from spawning the bridge to the `initialize` answer coming back through it. */
  startupMs: number;
  request(method: string, params?: Record<string, unknown>): Promise<JsonRpcReply>;
  notify(method: string, params?: Record<string, unknown>): void;
  /** Answers requests the server sends through the bridge (elicitation, sampling). */
  onRequest?: (method: string, params: Record<string, unknown>) => Record<string, unknown>;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts the bridge in front of `url` and initializes through it (protocol 2025-11-25). */
export async function startMcpRemote(
  url: string,
  capabilities: Record<string, unknown> = {},
  node = process.execPath,
): Promise<McpRemote> {
  const started = performance.now();
  // Its OAuth state goes to a throwaway directory, never to the real home.
  const config = mkdtempSync(join(tmpdir(), 'mcp-remote-'));
  const child = spawn(node, [MCP_REMOTE_ENTRY, url, '--allow-http'], {
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: config, HOME: config },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const waiting = new Map<number, (reply: JsonRpcReply) => void>();
  let nextId = 1;
  const send = (message: Record<string, unknown>) => child.stdin?.write(`${JSON.stringify(message)}\n`);
  const remote: McpRemote = {
    child,
    startupMs: 0,
    request(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, resolve);
        child.once('exit', (code) => reject(new Error(`mcp-remote exited (${code}): ${stderr}`)));
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    notify(method, params) {
      send({ jsonrpc: '2.0', method, ...(params && { params }) });
    },
    stderr: () => stderr,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // not a JSON-RPC line
    }
    if (typeof message['method'] === 'string' && message['id'] !== undefined) {
      const result = remote.onRequest?.(message['method'], (message['params'] ?? {}) as Record<string, unknown>);
      send({
        jsonrpc: '2.0',
        id: message['id'],
        ...(result ? { result } : { error: { code: -32601, message: 'Method not found' } }),
      });
      return;
    }
    if (typeof message['id'] === 'number') waiting.get(message['id'])?.(message as JsonRpcReply);
  });
  const init = await remote.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities,
    clientInfo: { name: 'mcp-remote-host', version: '1.0.0' },
  });
  if (init.error) throw new Error(`initialize through mcp-remote failed: ${init.error.message}`);
  remote.startupMs = performance.now() - started;
  remote.notify('notifications/initialized');
  return remote;
}
