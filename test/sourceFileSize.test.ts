// Files in src/ stay small enough to read in one sitting: over MAX_LINES lines a file must say why in its first
// comment ("Over 400 lines: …"), and only a few may. A reason left on a file that has shrunk is a stale exception.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

const MAX_LINES = 400;
/** How many files may carry a reason at once. */
const MAX_EXCEPTIONS = 2;
const REASON = /over 400 lines\b/i;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Lines as an editor counts them (a final newline ends the last line, it does not start another). */
function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The text of a file's first comment, wherever it stands (a header, or the doc comment of its first export). */
function firstComment(text: string): string | undefined {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan())
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) {
      // A run of line comments is one comment.
      let comment = scanner.getTokenText();
      if (token === ts.SyntaxKind.SingleLineCommentTrivia)
        for (let next = scanner.scan(); ; next = scanner.scan()) {
          if (next === ts.SyntaxKind.NewLineTrivia || next === ts.SyntaxKind.WhitespaceTrivia) continue;
          if (next !== ts.SyntaxKind.SingleLineCommentTrivia) break;
          comment += `\n${scanner.getTokenText()}`;
        }
      return comment;
    }
  return undefined;
}

/** Whether a file's first comment gives the reason it is long. */
function statesWhyLong(text: string): boolean {
  return REASON.test(firstComment(text) ?? '');
}

describe('the rule itself', () => {
  it('reads the reason from the first comment only', () => {
    expect(statesWhyLong('// Over 400 lines: one statement list.\n// more\nimport x from "y";\n')).toBe(true);
    expect(statesWhyLong('import x from "y";\n/** Over 400 lines: the façade. */\nexport class A {}\n')).toBe(true);
    expect(statesWhyLong('// A store.\nimport x from "y";\n// Over 400 lines: too late.\n')).toBe(false);
    expect(statesWhyLong('export const a = "// over 400 lines";\n')).toBe(false);
    expect(lineCount('a\nb\n')).toBe(2);
  });
});

describe(`files in src/ over ${MAX_LINES} lines`, () => {
  const sizes = walk(src).map((file) => {
    const text = readFileSync(file, 'utf8');
    return { name: relative(root, file), lines: lineCount(text), reason: statesWhyLong(text) };
  });

  it('say why in their first comment ("Over 400 lines: …")', () => {
    const unexplained = sizes.filter((file) => file.lines > MAX_LINES && !file.reason);
    expect(unexplained.map((file) => `${file.name}: ${file.lines} lines`)).toEqual([]);
  });

  it(`are at most ${MAX_EXCEPTIONS}`, () => {
    const long = sizes.filter((file) => file.lines > MAX_LINES);
    expect(long.length, long.map((file) => file.name).join(', ')).toBeLessThanOrEqual(MAX_EXCEPTIONS);
  });

  it('keep no reason once they are short again', () => {
    const stale = sizes.filter((file) => file.reason && file.lines <= MAX_LINES);
    expect(stale.map((file) => `${file.name}: ${file.lines} lines`)).toEqual([]);
  });
});
