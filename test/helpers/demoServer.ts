import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { ROOT } from './rawWire.js';

/** The demo server as `npm start` runs it, on a free port with `env` added (its store, root, log level). */
export async function startDemo(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; banner: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/examples/demo/server.js')], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let banner = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      banner += chunk.toString();
      const match = /demo server: (http:\/\/\S+)/.exec(banner);
      if (match && banner.includes('Try it')) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`demo exited ${code}`)));
  });
  return { child, url, banner };
}
