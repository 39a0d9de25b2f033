import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpPeer, ROOT } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/**
 * The tarball's ceiling, 600 KB: the package is code and the docs a user reads; screenshots, source maps, the
 * contributors' architecture and the benchmark records stay in the repository.
 */
const MAX_TARBALL_BYTES = 600_000;

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
const entryNames = Object.keys(pkg.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => `mcp-tasks${subpath.slice(1)}`);

/** The README's install and quick start sections: the `npm install` line and the server the quick start shows. */
function readmeInstall(): { packages: string[]; server: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Install\n([\s\S]*?)^## (?!Quick start)/m.exec(readme)?.[1] ?? '';
  const install = /```sh\nnpm install ([^\n]+)\n```/.exec(section)?.[1];
  const server = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!install || !server)
    throw new Error('README.md: no "## Install" and "## Quick start" with an npm install line and a ts block');
  return { packages: install.trim().split(/\s+/), server };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let packed: string[];
let tarball: string;
let app: string;
let server: string;

/**
 * The package as a user gets it. The source tree is copied without its build (as a fresh clone has it), so `npm pack`
 * must build it itself (prepack). Its tarball is installed into an empty ESM project along with what the README's
 * install line names. Dependencies come from the registry or npm's cache; install scripts are skipped, and
 * better-sqlite3's native binary, which its install script would compile, is taken from this checkout (same version,
 * same Node), which keeps the install to seconds instead of a compile.
 */
beforeAll(async () => {
  const tree = tempDir('mcp-tasks-pack-tree-');
  const skipped = new Set(['node_modules', 'dist', '.git', '.tmp', 'tools', 'test']);
  cpSync(ROOT, tree, {
    recursive: true,
    filter: (path) => {
      const [top = '', ...rest] = relative(ROOT, path).split('/');
      return !(rest.length === 0 && skipped.has(top)) && !/\.db(-wal|-shm|\.runners)?$/.test(path);
    },
  });
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
  // Output of a source since deleted: prepack builds from scratch, so it must not ship.
  mkdirSync(join(tree, 'dist/src'), { recursive: true });
  writeFileSync(join(tree, 'dist/src/removedModule.js'), 'export {};\n');
  const out = tempDir('mcp-tasks-pack-');
  // The prepack build prints to stdout before npm's JSON.
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', out], { cwd: tree });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  packed = info!.files.map((file) => file.path);
  tarball = join(out, info!.filename);

  app = join(out, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const { packages, server: source } = readmeInstall();
  const specs = packages.map((name) => (name === 'mcp-tasks' ? tarball : name));
  await run(npm, ['install', ...specs, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: app,
  });
  const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  mkdirSync(join(app, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
  copyFileSync(join(ROOT, binary), join(app, binary));
  server = source;
}, 300_000);

const children: Array<() => void> = [];
afterAll(() => {
  for (const stop of children.splice(0)) stop();
});

/** Starts a command in the app in its own process group (npx and what it runs stop together); resolves its URL. */
async function serving(command: string, args: string[]): Promise<{ url: string; stop: () => Promise<unknown> }> {
  const child = spawn(command, args, {
    cwd: app,
    detached: true,
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  children.push(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1] as string);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${output}`)));
  });
  return {
    url,
    stop: () => {
      process.kill(-child.pid!, 'SIGTERM');
      return exited;
    },
  };
}

describe('the published package', () => {
  it('npm pack builds an unbuilt tree from scratch (prepack) into a tarball within 600 KB', () => {
    expect(packed).toContain('dist/src/index.js');
    expect(packed).not.toContain('dist/src/removedModule.js');
    expect(statSync(tarball).size).toBeLessThanOrEqual(MAX_TARBALL_BYTES);
  });

  it('ships its licence and docs, but no source maps (their sources are not shipped) and no screenshots', () => {
    expect(packed).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'docs/limits.md']));
    expect(packed.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(packed.filter((path) => /\.(png|jpe?g|gif|webp)$/.test(path))).toEqual([]);
    expect(packed).not.toContain('docs/architecture.md');
    expect(packed).not.toContain('docs/benchmarks.md');
    expect(packed.some((path) => path.startsWith('test/') || path.startsWith('src/'))).toBe(false);
  });

  it('contains every file package.json points at', () => {
    const targets = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((target) =>
        typeof target === 'string' ? [target] : Object.values(target),
      ),
    ];
    const missing = targets.map((target) => target.replace(/^\.\//, '')).filter((path) => !packed.includes(path));
    expect(missing).toEqual([]);
  });

  it('every entry point imports by its name once installed', async () => {
    const script = `for (const name of ${JSON.stringify(entryNames)}) await import(name); console.log('ok');`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(stdout.trim()).toBe('ok');
  });

  it('require() of every entry point from CommonJS fails with an error that says to use import', async () => {
    writeFileSync(
      join(app, 'require.cjs'),
      `const failures = ${JSON.stringify(entryNames)}.map((name) => {
        try { require(name); return { name }; } catch (error) { return { name, code: error.code, message: error.message }; }
      });
      console.log(JSON.stringify(failures));`,
    );
    const { stdout } = await run(process.execPath, ['require.cjs'], { cwd: app });
    const failures = JSON.parse(stdout) as Array<{ name: string; code?: string; message?: string }>;
    expect(failures).toHaveLength(entryNames.length);
    for (const failure of failures) {
      expect(failure, failure.name).toMatchObject({ code: 'ERR_REQUIRE_ESM' });
      expect(failure.message).toContain('mcp-tasks is ESM-only');
      expect(failure.message).toContain('await import("mcp-tasks")');
      expect(failure.message).toContain('"type": "module"');
    }
  });

  it("the README's server compiles under tsc --init's strict settings and serves a task over MCP", async () => {
    await run(process.execPath, [TSC, '--init'], { cwd: app });
    expect(readFileSync(join(app, 'tsconfig.json'), 'utf8')).toMatch(/"strict": true/);
    // The README listens on 3000; the test on a free port.
    expect(server).toContain('port: 3000');
    writeFileSync(join(app, 'server.ts'), server.replace('port: 3000', `port: ${await freePort()}`));
    await run(process.execPath, [TSC, '-p', '.'], { cwd: app }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc failed:\n${error.stdout}`);
    });

    const { url, stop } = await serving(process.execPath, ['server.js']);
    const peer = new HttpPeer(url);
    expect((await peer.initialize()).result?.['capabilities']).toHaveProperty('tasks');
    await peer.notify('notifications/initialized');
    const created = await peer.request('tools/call', {
      name: 'slow_echo',
      arguments: { text: 'from the tarball' },
      task: { ttl: 60_000 },
    });
    const task = created.result?.['task'] as { taskId: string; status: string };
    expect(task.status).toBe('working');
    const result = await peer.request('tasks/result', { taskId: task.taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: 'from the tarball' }]);
    await peer.close();
    await stop();
    expect(existsSync(join(app, 'mcp-tasks.db'))).toBe(true);
  });

  it('npx mcp-tasks --help lists the commands', async () => {
    const { stdout } = await run(npx, ['--no', '--', 'mcp-tasks', '--help'], { cwd: app });
    expect(stdout).toContain('Usage: mcp-tasks');
    for (const command of ['serve', 'call', 'worker', 'proxy']) expect(stdout).toContain(command);
  });

  it('npx mcp-tasks serve announces its URL and answers MCP over HTTP', async () => {
    const { url, stop } = await serving(npx, ['--no', '--', 'mcp-tasks', 'serve', '--port', '0']);
    const peer = new HttpPeer(url);
    expect((await peer.initialize()).result?.['capabilities']).toHaveProperty('tasks');
    await peer.notify('notifications/initialized');
    const listed = await peer.request('tools/list');
    expect((listed.result?.['tools'] as Array<{ name: string }>).map((tool) => tool.name)).toContain('index_directory');
    await peer.close();
    await stop();
  });
});
