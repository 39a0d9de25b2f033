import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/** A signing key and the proxy's `auth.jwt` config that trusts it, for tests that act as several principals. */
export interface JwtIssuer {
  /** The proxy config's `auth.jwt` section: issuer, audience and the public key. */
  config: { issuer: string; audience: string; key: JWK };
  /** A one-hour token for `sub`, scope `mcp`. */
  token(sub: string): Promise<string>;
}

export async function createJwtIssuer(issuer: string, audience: string, kid: string): Promise<JwtIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const key = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' };
  return {
    config: { issuer, audience, key },
    token: (sub) =>
      new SignJWT({ scope: 'mcp' })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey),
  };
}
