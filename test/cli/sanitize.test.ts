/* eslint-disable no-control-regex -- the tests look for the control characters a terminal acts on */
import { describe, expect, it } from 'vitest';

import { terminalSafeJson, visibleLine, visibleText } from '../../src/cli/sanitize.js';

const ESC = String.fromCharCode(0x1b);

describe('the CLI sanitizer', () => {
  it('shows C0, DEL, C1 and bidi controls as escapes on one line, newlines and tabs included', () => {
    expect(visibleLine(`a${ESC}[2Jb\u009b1m\u007f\u202e\u2066\n\t\r`)).toBe(
      'a\\u001b[2Jb\\u009b1m\\u007f\\u202e\\u2066\\u000a\\u0009\\u000d',
    );
    expect(visibleLine('plain ünïcödé ⠋ 表')).toBe('plain ünïcödé ⠋ 表');
  });

  it('keeps the layout of multi-line text, and nothing else', () => {
    expect(visibleText(`one\r\ntwo\tthree\rfour${ESC}]52;c;eA==\u0007`)).toBe(
      'one\ntwo\tthree\\u000dfour\\u001b]52;c;eA==\\u0007',
    );
  });

  it('escapes in JSON what JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { text: `x\u009b31m\u0085\u2028\u2029\u202e${ESC}[0m\u007f`, n: 1 };
    const json = terminalSafeJson(value);
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
    expect(JSON.parse(json)).toEqual(value);
    expect(JSON.parse(terminalSafeJson(value, 2))).toEqual(value);
  });
});
