import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { unexportedReachable } from './unexportedReachable.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { import: string }>;
};
const entries = Object.values(pkg.exports).flatMap((target) =>
  typeof target === 'string' ? [] : [join(root, target.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'))],
);

describe('the public API, by shape', () => {
  it('exports every declaration of ours that a public signature of an entry point reaches', () => {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
    const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
    // A user sees these in hovers and declaration files; each must be importable from some entry point.
    expect(unexportedReachable(entries, options, root)).toEqual([]);
  });
});
