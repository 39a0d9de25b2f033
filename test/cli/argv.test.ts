import { describe, expect, it } from 'vitest';

import { normalizeJsonArguments, parseKeyValues, splitServerCommand } from '../../src/cli/argv.js';
import { UsageError } from '../../src/cli/UsageError.js';

describe('command-line parsing', () => {
  it('splits the stdio server command at the first --', () => {
    expect(splitServerCommand(['call', 'x', '--', 'node', 'server.js', '--', 'y'])).toEqual({
      cli: ['call', 'x'],
      server: ['node', 'server.js', '--', 'y'],
    });
    expect(splitServerCommand(['list'])).toEqual({ cli: ['list'], server: undefined });
    expect(() => splitServerCommand(['list', '--'])).toThrow(UsageError);
  });

  it("moves --json '{...}' to a trailing --args, keeping --json a switch", () => {
    expect(normalizeJsonArguments(['--json', '{"a":1}', 'call', 't'])).toEqual([
      '--json',
      'call',
      't',
      '--args',
      '{"a":1}',
    ]);
    expect(normalizeJsonArguments(['call', 't', '--json={"b":2}'])).toEqual([
      'call',
      't',
      '--json',
      '--args',
      '{"b":2}',
    ]);
    expect(normalizeJsonArguments(['--json', 'get', 'id'])).toEqual(['--json', 'get', 'id']);
  });

  it('reads key=value pairs, as JSON where they parse', () => {
    expect(parseKeyValues(['n=3', 'flag=true', 'name=Bob', 'obj={"x":[1]}', 'eq=a=b'])).toEqual({
      n: 3,
      flag: true,
      name: 'Bob',
      obj: { x: [1] },
      eq: 'a=b',
    });
    expect(() => parseKeyValues(['oops'])).toThrow(UsageError);
  });
});
