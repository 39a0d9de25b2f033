// The README shows code that compiles: each of its ts blocks is a file of examples/readme/ (copied in by
// scripts/sync-snippets.mjs), type-checked here with the project's settings; and the links of the README,
// CONTRIBUTING.md and docs/ lead to files and headings that exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const examples = join(root, 'examples/readme');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The file the README shows everywhere without showing it: the quick start's factory, for the other snippets. */
const SHARED = ['server.ts'];

interface Block {
  marker: string | undefined;
  body: string;
}

/** Every ts block of the README, with the `<!-- examples/readme/….ts -->` marker just above it, if any. */
function tsBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/(?:<!-- (examples\/readme\/[\w-]+\.ts) -->\n\n)?```ts\n([\s\S]*?)```/g)].map(
    ([, marker, body]) => ({ marker, body: body as string }),
  );
}

describe('the README snippets', () => {
  const blocks = tsBlocks(readme);
  const files = readdirSync(examples).filter((name) => name.endsWith('.ts'));

  it('are each a file of examples/readme/, marked above the block', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    expect(blocks.filter((block) => block.marker === undefined).map((block) => block.body.slice(0, 80))).toEqual([]);
  });

  it('equal their files (node scripts/sync-snippets.mjs copies them in)', () => {
    for (const { marker, body } of blocks) {
      const file = join(root, marker as string);
      expect(existsSync(file), `${marker} is missing`).toBe(true);
      expect(body, `README.md differs from ${marker}: run node scripts/sync-snippets.mjs`).toBe(
        readFileSync(file, 'utf8'),
      );
    }
  });

  it('show every file of examples/readme/ but the shared factory', () => {
    const shown = new Set(blocks.map((block) => block.marker?.slice('examples/readme/'.length)));
    expect(files.filter((name) => !shown.has(name) && !SHARED.includes(name))).toEqual([]);
  });

  it('cover every entry point of package.json', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const imported = new Set(
      blocks.flatMap(({ body }) => ts.preProcessFile(body, true, true).importedFiles.map((file) => file.fileName)),
    );
    const entries = Object.keys(pkg.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => (subpath === '.' ? 'mcp-tasks' : `mcp-tasks/${subpath.slice(2)}`));
    // The four stores share one section and one snippet; the others are named by that section.
    const storesShown = [...imported].some((name) => name.startsWith('mcp-tasks/stores/'));
    const missing = entries.filter(
      (entry) => !imported.has(entry) && !(entry.startsWith('mcp-tasks/stores/') && storesShown),
    );
    expect(missing).toEqual([]);
    for (const entry of entries.filter((name) => name.startsWith('mcp-tasks/stores/')))
      expect(readme, `${entry} is not named`).toContain(`\`/stores/${entry.split('/').at(-1)}\``);
  });

  // tsc checks them in every `npm test` (pretest: `npm run typecheck`), as it checks src/: no second compile here.
  it('are type-checked by npm test', () => {
    const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config as { include: string[] };
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
    for (const name of files) expect(parsed.fileNames, name).toContain(join(examples, name));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['pretest']).toContain('npm run typecheck');
    expect(pkg.scripts['typecheck']).toBe('tsc -p tsconfig.json');
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const outside = markdown.replace(/```[\s\S]*?```/g, '');
  return new Set([...outside.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => slug(heading as string)));
}

describe('the map', () => {
  it('links every document of docs/ from the README', () => {
    const docs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
    expect(docs.filter((name) => !readme.includes(`](docs/${name}`))).toEqual([]);
  });
});

describe('the links of README.md, CONTRIBUTING.md and docs/', () => {
  const documents = [
    'README.md',
    'CONTRIBUTING.md',
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];

  for (const document of documents) {
    it(`${document} links to files and headings that exist`, () => {
      const text = readFileSync(join(root, document), 'utf8').replace(/```[\s\S]*?```/g, '');
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [path = '', anchor] = (target as string).split('#');
        const file = path === '' ? join(root, document) : resolve(dirname(join(root, document)), path);
        if (!existsSync(file)) broken.push(`${target} (no ${relative(root, file)})`);
        else if (anchor && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${target} (no heading #${anchor})`);
      }
      expect(broken).toEqual([]);
    });
  }
});
