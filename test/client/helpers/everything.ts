import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

import type { StdioTarget } from '../../../src/client/index.js';

/** The locally installed reference server (a real 2025-11-25 task server), never fetched from the network. */
export const EVERYTHING_ENTRY = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

export function everythingStdio(): StdioTarget {
  return { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], stderr: 'ignore' };
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

export interface RunningServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over Streamable HTTP; the client only ever talks to it on 127.0.0.1. */
export async function startEverythingHttp(): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on port')) {
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    async stop() {
      // A killed child has a signalCode and no exitCode: without this check a second stop waits for ever.
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
