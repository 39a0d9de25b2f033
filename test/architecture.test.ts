import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The layer of a file: `engine`, `rpc`, `workflow`, `server`, `client`, `cli`, or `stores/x`, `executors/x`, `dialects/x`. */
function layerOf(file: string): string {
  const parts = relative(src, file).split('/');
  const top = parts[0] as string;
  if (['stores', 'executors', 'dialects'].includes(top) && parts.length > 2) return `${top}/${parts[1]}`;
  return top;
}

const files = walk(src);
const imports = new Map<string, Array<{ spec: string; target?: string }>>();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  imports.set(
    file,
    info.importedFiles.map(({ fileName: spec }) => {
      if (!spec.startsWith('.')) return { spec };
      return { spec, target: resolve(dirname(file), spec.replace(/\.js$/, '.ts')) };
    }),
  );
}

/** Which layers each layer may import (DESIGN.md §2), besides itself. */
function allowed(from: string, to: string): boolean {
  if (from === to) return true;
  const [fromTop] = from.split('/');
  const [toTop] = to.split('/');
  // The aggregate entry points (src/stores/index.ts, ...) re-export their sub-layers.
  if (['stores', 'executors', 'dialects'].includes(from) && toTop === from) return true;
  switch (fromTop) {
    case 'engine':
      return false;
    case 'stores':
    case 'executors':
      return to === 'engine';
    case 'rpc':
      return to === 'engine';
    case 'dialects':
      return to === 'engine' || to === 'rpc' || to === 'dialects/shared';
    case 'workflow':
      // The step API for tool handlers: over the engine's journal, below the server that wires it in.
      return to === 'engine';
    case 'server':
      return ['engine', 'rpc', 'dialects', 'stores', 'executors', 'workflow'].includes(toTop as string);
    case 'client':
      return to === 'rpc';
    case 'gateway':
      // The proxy: an SDK server in front (server runtime), the task client behind, engine types in between.
      return to === 'client' || to === 'server' || to === 'engine';
    case 'console':
      // The operator's view: engine reads and the engine's cancel, below the server that mounts it.
      return to === 'engine';
    case 'cli':
      // A thin shell over the public API: the client, the server runtime for `worker`, the gateway for `proxy`, the
      // console for `console` and `get --timeline`.
      return to === 'client' || to === 'server' || to === 'gateway' || to === 'console';
    case 'index.ts':
      // The package's root entry point re-exports the public layers.
      return true;
    default:
      return false;
  }
}

const DATABASE_AND_QUEUE_CLIENTS = ['better-sqlite3', 'pg', 'ioredis', 'bullmq'];

describe('the dependency rule (DESIGN.md §2)', () => {
  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  for (const file of files) {
    const from = layerOf(file);
    it(`${relative(root, file)} imports only what its layer may`, () => {
      for (const { spec, target } of imports.get(file) ?? []) {
        if (!target) {
          if (DATABASE_AND_QUEUE_CLIENTS.includes(spec))
            expect(['stores', 'executors'], `${spec} outside stores/executors`).toContain(from.split('/')[0]);
          if (from === 'engine') expect(spec.startsWith('node:'), `engine imports ${spec}`).toBe(true);
          continue;
        }
        const to = layerOf(target);
        expect(allowed(from, to), `${from} must not import ${to} (${spec})`).toBe(true);
        // Other layers are reached through their public entry point only.
        if (from !== to) expect(target.endsWith('/index.ts'), `${spec} is not a public entry point`).toBe(true);
      }
    });
  }

  it('has no circular imports', () => {
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const { target } of imports.get(file) ?? [])
        if (target && imports.has(target)) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
