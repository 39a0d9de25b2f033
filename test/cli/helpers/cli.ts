import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The binary under test; `MCP_TASKS_CLI` names another build (e.g. an earlier commit's, to see a test fail there). */
export const CLI = process.env['MCP_TASKS_CLI'] ?? join(ROOT, 'dist/src/cli/main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The CLI is tested as shipped: the compiled binary, rebuilt when the client or CLI sources are newer. */
export function ensureBuilt(): void {
  if (process.env['MCP_TASKS_CLI'] !== undefined) return;
  const built = existsSync(CLI) ? statSync(CLI).mtimeMs : 0;
  const sources = Math.max(newestSource(join(ROOT, 'src/client')), newestSource(join(ROOT, 'src/cli')));
  if (built >= sources) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  } catch {
    // Other parts of the repository may not compile yet; the CLI's own files are emitted regardless.
  }
  if (!existsSync(CLI)) throw new Error('dist/src/cli/main.js was not built');
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout contains `text` (or a JSON line matching `predicate`). */
  waitFor(predicate: (stdout: string, stderr: string) => boolean, timeoutMs?: number): Promise<void>;
  done: Promise<CliRun>;
}

/** Starts the binary without a terminal (pipes on every stream). */
export function startCli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const waiter of [...waiters]) waiter();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of [...waiters]) waiter();
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitFor(predicate, timeoutMs = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(stdout, stderr)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        void done.then(() => {
          if (!predicate(stdout, stderr)) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`the CLI exited first; stdout:\n${stdout}\nstderr:\n${stderr}`));
          }
        });
        check();
      });
    },
  };
}

export function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CliRun> {
  const run = startCli(args, { stdin: options.stdin ?? '', ...(options.env !== undefined && { env: options.env }) });
  return run.done;
}

/** Parses JSON-lines output, failing on any line that is not one JSON object. */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const value: unknown = JSON.parse(line);
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new Error(`not an object: ${line}`);
      return value as Record<string, unknown>;
    });
}
