/* eslint-disable no-control-regex -- finding control characters is what this module is for */
/**
 * Server-supplied text reaches a person's terminal through every command: status messages, questions, tool
 * descriptions, results, errors. A terminal acts on some characters instead of showing them: ESC starts sequences that
 * clear the screen, set the window title or write the clipboard (OSC 52); C1 controls do the same in one byte (U+009B
 * is CSI); carriage return and backspace overwrite what is shown; the bidirectional overrides and isolates reorder it.
 * Each is shown instead as its `\uXXXX` escape, so a hostile server's text is visible for what it is (as `gh` and
 * `kubectl` do). Every human-facing string goes through `visibleLine` or `visibleText`, and every JSON line through
 * `terminalSafeJson`.
 */

/** C0 controls, DEL, C1 controls, the line and paragraph separators, and the bidirectional formatting characters. */
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, but tab and newline: multi-line text (a tool's result, a question) keeps its layout. */
const UNSAFE_IN_TEXT =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw that a terminal still acts on (it escapes C0 itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** One line of text: every control (newline and tab included) shown as its escape. */
export function visibleLine(text: unknown): string {
  return String(text).replace(UNSAFE_IN_LINE, escape);
}

/** Multi-line text: newlines and tabs kept (a CRLF becomes a newline), every other control shown as its escape. */
export function visibleText(text: unknown): string {
  return String(text).replace(/\r\n/g, '\n').replace(UNSAFE_IN_TEXT, escape);
}

/**
 * JSON text that parses to the same value but carries no character a terminal acts on: JSON.stringify already
 * escapes C0 controls, and the rest appear only inside strings, where `\uXXXX` means the same character.
 */
export function terminalSafeJson(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(UNSAFE_IN_JSON, escape);
}
