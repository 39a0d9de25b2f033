// Installs dependencies with `npm ci` when node_modules is missing or older than package-lock.json,
// so `npm start` and `npm test` work on a fresh clone without a separate set-up step.
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const stamp = 'node_modules/.mcp-tasks-deps';
const lock = createHash('sha256').update(readFileSync('package-lock.json')).digest('hex');
const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';

if (installed !== lock) {
  console.error('[mcp-tasks] installing dependencies (npm ci)...');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
  writeFileSync(stamp, lock);
}
