import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { tempDir } from '../../helpers/tmp.js';
import { freePort, type RunningServer } from './everything.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUILT = join(ROOT, 'dist/examples/conformance/server.js');

/**
 * How to start our fixture server: `MCP_TASKS_FIXTURE_CMD` (a command line; it must serve Streamable HTTP on
 * 127.0.0.1:$PORT/mcp), else the built `dist/examples/conformance/server.js`. Undefined when neither is there.
 */
export function fixtureCommand(): string[] | undefined {
  const custom = process.env['MCP_TASKS_FIXTURE_CMD'];
  if (custom !== undefined && custom.trim() !== '') return custom.trim().split(/\s+/);
  return existsSync(BUILT) ? [process.execPath, BUILT] : undefined;
}

/** Starts the fixture server with its tasks in a SQLite file of its own. */
export async function startFixture(command: string[]): Promise<RunningServer> {
  const port = await freePort();
  const [program, ...args] = command as [string, ...string[]];
  const child = spawn(program, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), MCP_TASKS_STORE: join(tempDir(), 'fixture.db') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) {
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the fixture server exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
