import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpPeer, ROOT } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

let packed: string[];
let app: string;

/**
 * The package as a user gets it: `npm pack` of the built tree, installed from the tarball into an empty project.
 * Dependencies come from the registry (or npm's cache). Install scripts are skipped and better-sqlite3's native
 * binary, which its install script would compile or download, is taken from this checkout: same version, same Node.
 */
beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/src/index.js'))) throw new Error('run npm run build first');
  const out = tempDir('mcp-tasks-pack-');
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', out], { cwd: ROOT });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = info!.files.map((file) => file.path);
  app = join(out, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await run(
    npm,
    ['install', join(out, info!.filename), '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    { cwd: app },
  );
  const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  mkdirSync(join(app, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
  copyFileSync(join(ROOT, binary), join(app, binary));
}, 300_000);

const children: Array<() => void> = [];
afterAll(() => {
  for (const stop of children.splice(0)) stop();
});

describe('the published package', () => {
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
    expect(packed.some((path) => path.startsWith('test/') || path.startsWith('src/'))).toBe(false);
  });

  it('every entry point imports by its name once installed', async () => {
    const names = Object.keys(pkg.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => `mcp-tasks${subpath.slice(1)}`);
    const script = `for (const name of ${JSON.stringify(names)}) await import(name); console.log('ok');`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(stdout.trim()).toBe('ok');
  });

  it('npx mcp-tasks --help lists the commands', async () => {
    const { stdout } = await run(npx, ['--no', '--', 'mcp-tasks', '--help'], { cwd: app });
    expect(stdout).toContain('Usage: mcp-tasks');
    for (const command of ['serve', 'call', 'worker', 'proxy']) expect(stdout).toContain(command);
  });

  it('npx mcp-tasks serve announces its URL and answers MCP over HTTP', async () => {
    // Its own process group, so that stopping it stops npx and the server under it.
    const child = spawn(npx, ['--no', '--', 'mcp-tasks', 'serve', '--port', '0'], {
      cwd: app,
      detached: true,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    children.push(() => child.exitCode === null && process.kill(-child.pid!, 'SIGKILL'));
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /serving on (http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1] as string);
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
    });

    const peer = new HttpPeer(url);
    expect((await peer.initialize()).result?.['capabilities']).toHaveProperty('tasks');
    await peer.notify('notifications/initialized');
    const listed = await peer.request('tools/list');
    expect((listed.result?.['tools'] as Array<{ name: string }>).map((tool) => tool.name)).toContain('index_directory');
    await peer.close();

    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // The default store, a SQLite file in the working directory.
    expect(existsSync(join(app, 'mcp-tasks.db'))).toBe(true);
  });
});
