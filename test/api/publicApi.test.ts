import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { exportedSurface } from './exportedSurface.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; import: string }>;
};

/** Each npm entry point (package.json `exports`) with the source file it is built from. */
const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'string'
    ? []
    : [{ subpath, source: join(root, target.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')) }],
);

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
}

const VALUE_KINDS = ['class', 'function', 'const', 'enum'];

describe('the public API', () => {
  const surface = exportedSurface(
    entries.map((entry) => entry.source),
    compilerOptions(),
  );
  const kinds = (source: string) =>
    Object.fromEntries(Object.entries(surface[source] ?? {}).map(([name, { kind }]) => [name, kind]));

  it('exports exactly the recorded names from each entry point (update the snapshot deliberately)', async () => {
    const bySubpath = Object.fromEntries(entries.map(({ subpath, source }) => [subpath, kinds(source)]));
    await expect(JSON.stringify(bySubpath, null, 2) + '\n').toMatchFileSnapshot('./publicApi.snapshot.json');
  });

  it('keeps the root small', () => {
    expect(Object.keys(kinds(join(root, 'src/index.ts'))).length).toBeLessThanOrEqual(30);
  });

  for (const { subpath, source } of entries) {
    it(`${subpath}: the values it declares are the values it exports at run time`, async () => {
      const module = (await import(pathToFileURL(source).href)) as Record<string, unknown>;
      const declared = Object.entries(kinds(source))
        .filter(([, kind]) => kind.split('+').some((part) => VALUE_KINDS.includes(part)))
        .map(([name]) => name);
      expect(Object.keys(module).sort()).toEqual(declared.sort());
    });
  }

  it('gives no name two meanings across entry points', () => {
    const declarations = new Map<string, Set<string>>();
    for (const names of Object.values(surface))
      for (const [name, { declaredAt }] of Object.entries(names))
        declarations.set(name, (declarations.get(name) ?? new Set()).add(declaredAt));
    const twoMeanings = [...declarations].filter(([, where]) => where.size > 1).map(([name]) => name);
    expect(twoMeanings).toEqual([]);
  });
});
