import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { listeningUrl } from './listeningUrl.js';

const FIXTURE = fileURLToPath(new URL('../examples/conformance/server.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../examples/conformance/worker.js', import.meta.url));
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

/** A fixture server process on HTTP (port 0), with `call` sending one 2026-07-28 request and returning its result. */
export async function startFixture(env: Record<string, string>) {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listeningUrl(child);
  const call = async (method: string, params: Record<string, unknown>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        'mcp-name': String(params['taskId'] ?? params['name']),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
    });
    const text = await response.text();
    const line = text.includes('data:')
      ? (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)
          ?.slice(5) ?? '{}')
      : text;
    return (JSON.parse(line) as { result: Record<string, unknown> }).result;
  };
  return { child, call };
}

/** A fixture worker process; `logs` collects its JSON log lines, and it resolves once the worker takes jobs. */
export async function startFixtureWorker(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; logs: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry['message'] === 'fixture worker ready') resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`fixture worker exited (${code})`)));
  });
  return { child, logs };
}

/** Kills `child` with SIGKILL and waits until it is gone. */
export async function kill9(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
