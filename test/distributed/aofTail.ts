import { readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';

/** One command of an append-only file and where it starts. */
export interface AofCommand {
  offset: number;
  args: string[];
}

/** The commands of a RESP append-only file (arrays of bulk strings, as Redis writes them). */
export function aofCommands(data: Buffer): AofCommand[] {
  const commands: AofCommand[] = [];
  let at = 0;
  const line = (): string => {
    const end = data.indexOf('\r\n', at);
    if (end < 0) throw new Error(`unterminated line at ${at}`);
    const text = data.toString('latin1', at, end);
    at = end + 2;
    return text;
  };
  while (at < data.length) {
    const offset = at;
    const header = line();
    if (!header.startsWith('*')) throw new Error(`not a command at ${offset}: ${header}`);
    const args: string[] = [];
    for (let i = Number(header.slice(1)); i > 0; i--) {
      const length = Number(line().slice(1));
      args.push(data.toString('utf8', at, at + length));
      at += length + 2;
    }
    commands.push({ offset, args });
  }
  return commands;
}

/** The incremental append-only file of a Redis data directory (Redis 7's multi-part AOF). */
export function incrAofPath(dir: string): string {
  const folder = join(dir, 'appendonlydir');
  const names = readdirSync(folder).filter((name) => name.endsWith('.incr.aof'));
  if (names.length !== 1) throw new Error(`expected one incremental AOF in ${folder}, found ${names.join(', ')}`);
  return join(folder, names[0] as string);
}

/**
 * Cuts the append-only file of a stopped Redis just before the first command `matches` (before its transaction when it
 * is inside one), as if the writes from there on had never reached the disk. Returns the commands cut.
 */
export function cutAofBefore(dir: string, matches: (args: string[]) => boolean): number {
  const path = incrAofPath(dir);
  const commands = aofCommands(readFileSync(path));
  const index = commands.findIndex((command) => matches(command.args));
  if (index < 0) throw new Error('no command in the append-only file matches');
  let start = index;
  for (let i = index - 1; i >= 0; i--) {
    const name = commands[i]?.args[0]?.toUpperCase();
    if (name === 'EXEC') break;
    if (name === 'MULTI') {
      start = i;
      break;
    }
  }
  truncateSync(path, (commands[start] as AofCommand).offset);
  return commands.length - start;
}
