import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { passesRequestGuard } from '../../../src/server/http/requestGuardResponse.js';

describe('passesRequestGuard: the fast path’s Host and Origin check, remembered per header pair', () => {
  it('gives the same verdict on a pair it has seen as on its first sight', () => {
    const options = { allowedHostnames: ['localhost'], allowedOrigins: ['app.example.com'] };
    const pairs: Array<[string | undefined, string | undefined, boolean]> = [
      ['localhost:3000', undefined, true],
      ['evil.example:3000', undefined, false],
      [undefined, undefined, false],
      ['localhost:3000', 'https://app.example.com', true],
      ['localhost:3000', 'https://evil.example', false],
      ['localhost:3000', 'null', false],
    ];
    for (let round = 0; round < 3; round++)
      for (const [host, origin, verdict] of pairs) expect(passesRequestGuard(host, origin, options)).toBe(verdict);
  });

  it('keeps the verdicts of one options object apart from another’s', () => {
    const strict = { allowedHostnames: ['localhost'] };
    const open = { allowedHostnames: ['localhost', 'tasks.internal'] };
    expect(passesRequestGuard('tasks.internal', undefined, strict)).toBe(false);
    expect(passesRequestGuard('tasks.internal', undefined, open)).toBe(true);
    expect(passesRequestGuard('tasks.internal', undefined, strict)).toBe(false);
  });

  it('agrees with the SDK’s own checks on edge inputs, seen once or again', () => {
    const options = { allowedHostnames: ['localhost', '[::1]'], allowedOrigins: ['app.example.com'] };
    const hosts = [undefined, '', 'localhost', '[::1]:80', 'localhost:x', '-', '+localhost'];
    const origins = [undefined, '', 'null', 'https://app.example.com', 'https://app.example.com.evil', '-'];
    for (let round = 0; round < 2; round++)
      for (const host of hosts)
        for (const origin of origins) {
          const expected =
            validateHostHeader(host, options.allowedHostnames).ok &&
            validateOriginHeader(origin, options.allowedOrigins).ok;
          expect(passesRequestGuard(host, origin, options), `${host} ${origin}`).toBe(expected);
        }
  });

  it('stays right past its bound, with many hosts seen', () => {
    const options = { allowedHostnames: ['localhost'] };
    for (let i = 0; i < 500; i++) {
      expect(passesRequestGuard(`host-${i}.example`, undefined, options)).toBe(false);
      expect(passesRequestGuard('localhost', undefined, options)).toBe(true);
    }
  });
});
