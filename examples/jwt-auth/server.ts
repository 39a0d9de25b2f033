// The demo server behind OAuth 2.1 bearer tokens (JWT access tokens): `node dist/examples/jwt-auth/server.js`.
// With MCP_TASKS_JWKS_URL, MCP_TASKS_JWT_ISSUER and MCP_TASKS_JWT_AUDIENCE it trusts that authorization server.
// Without them it plays a local issuer too: it makes a key pair, publishes its JWKS on 127.0.0.1 and prints tokens
// for two principals, so the ownership rules can be tried with curl or the CLI.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

import { exportJWK, generateKeyPair, SignJWT } from 'jose';

import { jwtAuth } from 'mcp-tasks';
import { startDemoServer } from '../demo/server.js';

const LOCAL_AUDIENCE = 'mcp-tasks-demo';

/** A throwaway issuer: a signing key, its JWKS on 127.0.0.1, and a way to mint tokens. */
async function localIssuer(): Promise<{ jwksUrl: string; issuer: string; mint(sub: string): Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'local-1', alg: 'ES256', use: 'sig' };
  const jwks = createServer((req, res) => {
    if (req.url === '/jwks.json')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwks.unref();
  const issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    mint: (sub) =>
      new SignJWT({ scope: 'tasks' })
        .setProtectedHeader({ alg: 'ES256', kid: 'local-1' })
        .setIssuer(issuer)
        .setAudience(LOCAL_AUDIENCE)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const configured = process.env['MCP_TASKS_JWKS_URL'];
  const local = configured ? undefined : await localIssuer();
  const issuer = process.env['MCP_TASKS_JWT_ISSUER'] ?? local?.issuer;
  if (!issuer) throw new Error('MCP_TASKS_JWT_ISSUER is required with MCP_TASKS_JWKS_URL');
  const demo = await startDemoServer({
    port: Number(process.env['PORT'] ?? 3000),
    host: process.env['HOST'] ?? '127.0.0.1',
    auth: jwtAuth({
      issuer,
      audience: process.env['MCP_TASKS_JWT_AUDIENCE'] ?? LOCAL_AUDIENCE,
      jwksUrl: configured ?? (local?.jwksUrl as string),
      scopesSupported: ['tasks'],
      ...(process.env['MCP_TASKS_RESOURCE'] && { resource: process.env['MCP_TASKS_RESOURCE'] }),
    }),
  });
  console.log(`mcp-tasks demo server (bearer tokens required): ${demo.url}`);
  if (local) {
    console.log(`token for alice: ${await local.mint('alice')}`);
    console.log(`token for bob:   ${await local.mint('bob')}`);
    console.log(`Try it:  node dist/src/cli/main.js --url ${demo.url} --header "Authorization: Bearer <token>" tools`);
  }
  const stop = () => void demo.close().finally(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
