import { terminalSafeJson, visibleLine } from './sanitize.js';

/** A long-running command's log on stderr, one sanitized line each (`mcp-tasks <command>: <level> …`). */
export function stderrLogger(command: string, verbose: boolean) {
  const line = (level: string) => (fields: Record<string, unknown>, message: string) =>
    process.stderr.write(`mcp-tasks ${command}: ${level} ${visibleLine(message)} ${terminalSafeJson(fields)}\n`);
  return { info: verbose ? line('info') : () => {}, warn: line('warn'), error: line('error') };
}
