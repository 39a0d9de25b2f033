// One encoding of an authenticated principal as a task owner: the caller's owner (resolveCaller), the owner an
// addressed untasked event goes to (EmittedEvents) and the principal the events authorization is asked about
// (principalOfOwner) must agree, or an addressed event misses its caller and a check names the wrong principal.
import { describe, expect, it } from 'vitest';

import { principalOfOwner, principalOwnerKey } from '../../src/engine/index.js';
import { principalOwner } from '../../src/events/EmittedEvents.js';
import { principalOwnerOf } from '../../src/server/limits/resolveCaller.js';

describe('principal owners', () => {
  const cases: Array<[clientId: string | undefined, sub: string | undefined]> = [
    ['app', 'alice'],
    ['app', undefined],
    [undefined, 'alice'],
    ['', 'alice'],
    ['with "quotes" and :colons', 'ü'],
  ];

  it.each(cases)('client %j, sub %j: the caller, an addressed event and the authorization agree', (clientId, sub) => {
    const owner = principalOwnerOf({ clientId: clientId as string, extra: sub === undefined ? {} : { sub } });
    expect(owner).toBeDefined();
    expect(principalOwner({ ...(clientId !== undefined && { clientId }), ...(sub !== undefined && { sub }) })).toBe(
      owner,
    );
    expect(principalOfOwner(owner as string)).toEqual({ clientId: clientId ?? null, subject: sub ?? null });
    expect(principalOwnerKey({ clientId: clientId ?? null, subject: sub ?? null })).toBe(owner);
  });

  it('reads no principal from an unauthenticated or malformed owner', () => {
    expect(principalOfOwner('anonymous:1.2.3.4')).toBeUndefined();
    expect(principalOfOwner('session:abc')).toBeUndefined();
    expect(principalOfOwner('principal:{not json')).toBeUndefined();
  });
});
