import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { jwtAuth } from '../../src/server/index.js';
import { HttpPeer, ModernPeer, ROOT } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const AUDIENCE = 'https://mcp.example.test/mcp';

interface Issuer {
  url: string;
  jwksUrl: string;
  server: Server;
  jwksRequests: number;
}

/** A real JWKS endpoint on 127.0.0.1 publishing `publicKey` under kid `k1`. */
async function serveJwks(publicKey: CryptoKey): Promise<Issuer> {
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const issuer = { jwksRequests: 0 } as Issuer;
  issuer.server = createServer((req, res) => {
    issuer.jwksRequests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => issuer.server.listen(0, '127.0.0.1', resolve));
  issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}`;
  issuer.jwksUrl = `${issuer.url}/jwks.json`;
  return issuer;
}

/** The jwt-auth example server trusting `issuer`, with the demo reading under `root`. */
async function startExample(issuer: Issuer, root: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/examples/jwt-auth/server.js')], {
    env: {
      ...process.env,
      PORT: '0',
      MCP_TASKS_STORE: join(tempDir(), 'tasks.db'),
      MCP_TASKS_DEMO_ROOT: root,
      MCP_TASKS_JWKS_URL: issuer.jwksUrl,
      MCP_TASKS_JWT_ISSUER: issuer.url,
      MCP_TASKS_JWT_AUDIENCE: AUDIENCE,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /required\): (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`example exited ${code}`)));
  });
  return { child, url };
}

describe('JWT bearer authentication with Protected Resource Metadata (example server, real JWKS)', () => {
  let keys: { publicKey: CryptoKey; privateKey: CryptoKey };
  let stranger: CryptoKey;
  let issuer: Issuer;
  let child: ChildProcess;
  let url: string;
  let metadataUrl: string;
  const root = tempDir();

  const token = (
    claims: { sub?: string; iss?: string; aud?: string; exp?: string | number } = {},
    key = keys.privateKey,
  ) =>
    new SignJWT({ scope: 'tasks' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(claims.iss ?? issuer.url)
      .setAudience(claims.aud ?? AUDIENCE)
      .setSubject(claims.sub ?? 'alice')
      .setIssuedAt()
      .setExpirationTime(claims.exp ?? '10m')
      .sign(key);

  const post = (headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });

  beforeAll(async () => {
    keys = await generateKeyPair('RS256');
    stranger = (await generateKeyPair('RS256')).privateKey;
    issuer = await serveJwks(keys.publicKey);
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `f${i}.txt`), String(i));
    ({ child, url } = await startExample(issuer, root));
    metadataUrl = `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;
  });
  afterAll(async () => {
    child.kill('SIGTERM');
    issuer.server.close();
  });

  it('answers a request without a token 401 with a challenge pointing at the metadata, without an error code', async () => {
    const response = await post({});
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer scope="tasks", resource_metadata="${metadataUrl}"`);
  });

  it('serves the Protected Resource Metadata at the path-inserted and the root well-known URL', async () => {
    for (const address of [metadataUrl, `${new URL(url).origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(address);
      expect(response.status, address).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(await response.json()).toEqual({
        resource: url,
        authorization_servers: [issuer.url],
        scopes_supported: ['tasks'],
        bearer_methods_supported: ['header'],
      });
    }
    expect((await fetch(`${new URL(url).origin}/.well-known/oauth-protected-resource/other`)).status).toBe(404);
  });

  it.each([
    ['expired', () => token({ exp: Math.floor(Date.now() / 1000) - 3600 }), 'The token has expired'],
    ['for another audience', () => token({ aud: 'https://other.example.test/mcp' }), "The token's aud claim"],
    ['from another issuer', () => token({ iss: 'https://evil.example.test' }), "The token's iss claim"],
    ['signed with another key', () => token({}, stranger), 'The token signature is invalid'],
    ['not a JWT', async () => 'abc.def.ghi', 'malformed'],
  ])('refuses a token %s with 401 invalid_token and the metadata URL', async (_name, make, description) => {
    const response = await post({ authorization: `Bearer ${await make()}` });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"/);
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
    expect(((await response.json()) as { error_description: string }).error_description).toContain(description);
  });

  it('makes the token subject the owner: another principal gets what a missing task gets', async () => {
    const alice = new HttpPeer(url, { authorization: `Bearer ${await token({ sub: 'alice' })}` });
    const bob = new HttpPeer(url, { authorization: `Bearer ${await token({ sub: 'bob' })}` });
    try {
      expect((await alice.initialize()).result?.['protocolVersion']).toBe('2025-11-25');
      await bob.initialize();
      const created = await alice.request('tools/call', {
        name: 'index_directory',
        arguments: { path: '.', delayMs: 200 },
        task: {},
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      expect(taskId).toBeTypeOf('string');
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const foreign = await bob.request(method, { taskId });
        const missing = await bob.request(method, { taskId: '00000000-0000-4000-8000-000000000000' });
        expect(foreign.error, method).toEqual(missing.error);
      }
      const listed = (await bob.request('tasks/list')).result?.['tasks'] as Array<{ taskId: string }>;
      expect(listed.map((task) => task.taskId)).not.toContain(taskId);
      // The same subject with a fresh token, in a new session, is the same owner.
      const again = new HttpPeer(url, { authorization: `Bearer ${await token({ sub: 'alice' })}` });
      await again.initialize();
      expect((await again.request('tasks/get', { taskId })).result?.['status']).toBe('working');
      expect((await again.request('tasks/cancel', { taskId })).result?.['status']).toBe('cancelled');
      await again.close();
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('jwtAuth on the 2026-07-28 wire (stateless, tasks extension)', () => {
  let keys: { publicKey: CryptoKey; privateKey: CryptoKey };
  let issuer: Issuer;
  let child: ChildProcess;
  let url: string;
  const root = tempDir();

  const token = (sub: string) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer.url)
      .setAudience(AUDIENCE)
      .setSubject(sub)
      .setExpirationTime('10m')
      .sign(keys.privateKey);

  beforeAll(async () => {
    keys = await generateKeyPair('RS256');
    issuer = await serveJwks(keys.publicKey);
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `f${i}.txt`), String(i));
    ({ child, url } = await startExample(issuer, root));
  });
  afterAll(async () => {
    child.kill('SIGTERM');
    issuer.server.close();
  });

  it('refuses a request without a token with the challenge, and scopes tasks to the token subject', async () => {
    const anonymous = await new ModernPeer(url).request('tools/list');
    expect(anonymous.httpStatus).toBe(401);
    const alice = new ModernPeer(url, { authorization: `Bearer ${await token('alice')}` });
    const bob = new ModernPeer(url, { authorization: `Bearer ${await token('bob')}` });
    const created = await alice.request('tools/call', {
      name: 'index_directory',
      arguments: { path: '.', delayMs: 200 },
    });
    expect(created.result?.['resultType']).toBe('task');
    const taskId = created.result?.['taskId'] as string;
    const foreign = await bob.request('tasks/get', { taskId });
    const missing = await bob.request('tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' });
    expect(foreign.error).toEqual(missing.error);
    expect(foreign.error).toBeDefined();
    expect((await alice.request('tasks/get', { taskId })).result?.['taskId']).toBe(taskId);
    await alice.request('tasks/cancel', { taskId });
  });
});

describe('jwtAuth with a static key', () => {
  const secret = new TextEncoder().encode('a-test-secret-of-at-least-32-bytes!!');
  const sign = (scope: string, extra: Record<string, unknown> = {}) =>
    new SignJWT({ scope, ...extra })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('https://issuer.test')
      .setAudience('api')
      .setExpirationTime('5m')
      .sign(secret);
  const request = (token?: string) =>
    new Request('http://127.0.0.1:9/mcp', { headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('yields the principal (sub, client, scopes, expiry) the authenticate option expects', async () => {
    const auth = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', key: secret });
    const info = await auth.authenticate(request(await sign('read write', { sub: 'carol', client_id: 'cli-1' })));
    expect(info).toMatchObject({ clientId: 'cli-1', scopes: ['read', 'write'], extra: { sub: 'carol' } });
    expect((info as { expiresAt: number }).expiresAt).toBeGreaterThan(Date.now() / 1000);
    const noSubject = await auth.authenticate(request(await sign('read')));
    expect((noSubject as Response).status).toBe(401);
  });

  it('refuses a token without a required scope with 403 insufficient_scope', async () => {
    const auth = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', key: secret, requiredScopes: ['write'] });
    const refused = (await auth.authenticate(request(await sign('read', { sub: 'carol' })))) as Response;
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", error_description="The token lacks a required scope", scope="write", ' +
        'resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('lets requests without a token through as anonymous only when asked to', async () => {
    const strict = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', key: secret });
    const open = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', key: secret, allowAnonymous: true });
    expect(((await strict.authenticate(request())) as Response).status).toBe(401);
    expect(await open.authenticate(request())).toBeUndefined();
    // A token that is present is still checked.
    expect(((await open.authenticate(request('garbage'))) as Response).status).toBe(401);
  });

  it('answers 503 (not 401) when the key set cannot be fetched', async () => {
    const auth = jwtAuth({ issuer: 'https://issuer.test', audience: 'api', jwksUrl: 'http://127.0.0.1:9/jwks.json' });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'x' })
      .setSubject('dave')
      .sign((await generateKeyPair('RS256')).privateKey);
    expect(((await auth.authenticate(request(token))) as Response).status).toBe(503);
  });
});
