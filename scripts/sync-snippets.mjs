#!/usr/bin/env node
// Copies each examples/readme/*.ts file into the README's ts block that follows its marker
// (`<!-- examples/readme/name.ts -->`), so the README shows code that tsc checks. `--check` only reports drift.
// test/readme.test.ts fails when the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readmePath = join(root, 'README.md');
const MARKED_BLOCK = /(<!-- (examples\/readme\/[\w-]+\.ts) -->\n\n```ts\n)([\s\S]*?)(```)/g;

const readme = readFileSync(readmePath, 'utf8');
const drifted = [];
const synced = readme.replace(MARKED_BLOCK, (_match, head, file, body, tail) => {
  const source = readFileSync(join(root, file), 'utf8');
  if (source !== body) drifted.push(file);
  return `${head}${source}${tail}`;
});

if (process.argv.includes('--check')) {
  if (drifted.length > 0) {
    console.error(`README.md differs from ${drifted.join(', ')}: run node scripts/sync-snippets.mjs`);
    process.exit(1);
  }
} else if (drifted.length > 0) {
  writeFileSync(readmePath, synced);
  console.log(`README.md: synced ${drifted.join(', ')}`);
}
