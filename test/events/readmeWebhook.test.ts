// The README's webhook snippet runs as shipped: its compiled file, a real server and a real receiver in one process.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE = join(ROOT, 'examples/readme/webhook.ts');
const BUILT = join(ROOT, 'dist/examples/readme/webhook.js');

function ensureBuilt(): void {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= statSync(SOURCE).mtimeMs) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  } catch {
    // Other parts of the repository may not compile yet; the snippet is emitted regardless.
  }
}

describe('README: a host receives a webhook when its task finishes', () => {
  it('the snippet subscribes, answers the handshake, verifies the delivery and prints the task’s completion', async () => {
    ensureBuilt();
    const child = spawn(process.execPath, [BUILT], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook within 20 s; stderr:\n${stderr}`)), 20_000);
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /webhook: task (\S+) completed/.exec(stdout);
          if (match) {
            clearTimeout(timer);
            resolve(match[0]);
          }
        });
        child.once('exit', (code) => reject(new Error(`the snippet exited ${code}; stderr:\n${stderr}`)));
      });
      expect(line).toMatch(/^webhook: task [0-9a-f-]{36} completed$/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);
});
