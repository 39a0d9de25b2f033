// Installs dependencies with `npm ci` wherever node_modules is missing or older than its package-lock.json,
// so `npm start` and `npm test` work on a fresh clone without a separate set-up step.
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The conformance tools carry their own Node 22 binary; they live apart so it never shadows the project's Node.
const projects = process.argv.includes('--with-conformance') ? ['.', 'tools/conformance'] : ['.'];

for (const dir of projects) {
  const stamp = join(dir, 'node_modules/.mcp-tasks-deps');
  const lock = createHash('sha256')
    .update(readFileSync(join(dir, 'package-lock.json')))
    .digest('hex');
  const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
  if (installed !== lock) {
    console.error(`[mcp-tasks] installing dependencies in ${dir} (npm ci)...`);
    execSync('npm ci --no-audit --no-fund', { stdio: 'inherit', cwd: dir });
    writeFileSync(stamp, lock);
  }
}
