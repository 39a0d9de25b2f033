import { McpServer } from '@modelcontextprotocol/server';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, jwtAuth, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';

const SECRET = new TextEncoder().encode('a-test-secret-of-at-least-32-bytes!!');
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'jwt-claims', version: '1' } },
});

/** A token signed with the server's key, with `claims` as they are (no type checks of the signer's own). */
async function tokenOf(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = encode({ alg: 'HS256', ...header });
  const body = encode({ iss: 'https://issuer.test', aud: 'api', exp: now + 300, scope: 'tasks', ...claims });
  // SignJWT validates claim types itself, so the signature is made over the raw segments.
  const { createHmac } = await import('node:crypto');
  const signature = createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${signature}`;
}

const createServer = () => new McpServer({ name: 'jwt-claims', version: '1.0.0' });

describe('jwtAuth refuses tokens whose subject or type would not name a principal (served over HTTP)', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;

  beforeAll(async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    const auth = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', key: SECRET });
    http = await serveHttp(tasks, { port: 0, ...auth });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  const initialize = (token: string) =>
    fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: INITIALIZE,
    });

  it('answers 401 invalid_token for a sub that is a number, empty or null', async () => {
    for (const sub of [42, '', null]) {
      const response = await initialize(await tokenOf({ sub }));
      expect([sub, response.status]).toEqual([sub, 401]);
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(response.headers.get('www-authenticate')).toContain(
        'error_description="The token sub claim must be a non-empty string"',
      );
      expect(await response.json()).toEqual({
        error: 'invalid_token',
        error_description: 'The token sub claim must be a non-empty string',
      });
    }
  });

  it('answers 401 for an empty client_id without a subject', async () => {
    const response = await initialize(await tokenOf({ client_id: '' }));
    expect(response.status).toBe(401);
  });

  it('accepts the access-token types JWT, at+jwt and application/at+jwt in any case, or none', async () => {
    for (const typ of [undefined, 'JWT', 'jwt', 'at+jwt', 'AT+JWT', 'application/at+jwt']) {
      const response = await initialize(await tokenOf({ sub: 'alice' }, typ === undefined ? {} : { typ }));
      expect([typ, response.status]).toEqual([typ, 200]);
      await response.body?.cancel();
    }
  });

  it('refuses a token of another type with 401', async () => {
    for (const typ of ['dpop+jwt', 'logout+jwt', 'JOSE', 42]) {
      const response = await initialize(await tokenOf({ sub: 'alice' }, { typ }));
      expect([typ, response.status]).toEqual([typ, 401]);
      expect(response.headers.get('www-authenticate')).toContain('The token type (typ) is not accepted');
    }
  });

  it('still accepts a token signed the usual way', async () => {
    const token = await new SignJWT({ scope: 'tasks' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer('https://issuer.test')
      .setAudience('api')
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(SECRET);
    const response = await initialize(token);
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });
});
