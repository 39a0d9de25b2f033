import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { tempDir } from '../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WALK = fileURLToPath(new URL('./fixtures/walkA.mjs', import.meta.url));

/**
 * Walk (a) as docs/architecture.md writes it: the numbered files a reader follows, in order, and every file it names
 * in the section (those, the leaves called on the way, the timers beside it), as paths under src/.
 */
function documentedWalk(): { steps: string[]; named: Set<string> } {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('**Walk (a)');
  const section = doc.slice(start, doc.indexOf('\n### ', start));
  const steps = [...section.matchAll(/^\d+\. ([\w/.-]+\.ts) —/gm)].map((match) => `src/${match[1]}`);
  const named = new Set(steps);
  // "- `folder/`: A, B" and "`folder/`: A; …" name files by folder.
  for (const [, folder, names] of section.matchAll(/`([\w/.-]+\/)`: ((?:[\w, ]|\n(?!\n))+)/g))
    for (const name of (names as string).split(',')) named.add(`src/${folder}${name.trim()}.ts`);
  return { steps, named };
}

async function measuredWalk(mode: 'warm' | 'cold'): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [WALK, join(tempDir(), 'tasks.db'), mode], {
    timeout: 60_000,
  });
  const reply = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { files?: string[]; error?: string };
  if (!reply.files) throw new Error(reply.error ?? 'no reply');
  return reply.files;
}

describe('walk (a): a 2025-11-25 task call over HTTP to its tasks/result (docs/architecture.md)', () => {
  const { steps, named } = documentedWalk();

  it('is written as at most 20 numbered files', () => {
    expect(steps.length).toBeGreaterThan(10);
    expect(steps.length).toBeLessThanOrEqual(20);
    expect(new Set(steps).size).toBe(steps.length);
    // Every name read from the section is a file name (a wrapped or garbled list fails here).
    expect([...named].filter((file) => !/^src\/[\w/.-]+\/\w+\.ts$/.test(file))).toEqual([]);
  });

  for (const mode of ['warm', 'cold'] as const) {
    it(`names every file whose code runs, and every numbered file runs (${mode} server)`, async () => {
      const ran = await measuredWalk(mode);
      expect(ran.filter((file) => !named.has(file))).toEqual([]);
      expect(steps.filter((file) => !ran.includes(file))).toEqual([]);
    });
  }
});
