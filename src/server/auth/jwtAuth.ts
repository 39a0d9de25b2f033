import type * as JoseModule from 'jose';
import type { JWTPayload, JWTVerifyGetKey, KeyInput } from 'jose';

import type { AuthInfoLike } from '../ServerLike.js';
import { bearerChallenge, type BearerRefusal } from './bearerChallenge.js';
import { protectedResourceMetadataUrl, resourceOf, type ProtectedResourceOptions } from './ProtectedResource.js';

export interface JwtAuthOptions extends Partial<ProtectedResourceOptions> {
  /** The `iss` every token must carry; also the default authorization server in the metadata. */
  issuer: string;
  /** The `aud` a token must carry (one of): the identifier the authorization server issues tokens for this server. */
  audience: string | string[];
  /** Where the issuer publishes its signing keys (JWKS); fetched on demand and cached. Give this or `key`. */
  jwksUrl?: string;
  /** A static verification key (public key, JWK, or an HMAC secret as bytes). Give this or `jwksUrl`. */
  key?: KeyInput;
  /** Accepted signature algorithms, e.g. `['RS256', 'ES256']`. Default: whatever suits the key. */
  algorithms?: string[];
  /** Scopes every request needs; a token without them gets 403 insufficient_scope. */
  requiredScopes?: string[];
  /** Leeway for `exp`/`nbf`/`iat` against clock skew. Default 5 seconds. */
  clockToleranceSec?: number;
  /** Requests without an Authorization header pass as anonymous instead of getting 401. Default false. */
  allowAnonymous?: boolean;
  /** A longer token is refused unread. Default 16384 bytes. */
  maxTokenBytes?: number;
}

/** What `serveHttp` (or `createTasksHttpHandler` plus your own metadata route) takes: spread it into the options. */
export interface BearerAuth {
  authenticate(request: Request): Promise<AuthInfoLike | undefined | Response>;
  protectedResource: ProtectedResourceOptions;
}

const DEFAULT_MAX_TOKEN_BYTES = 16_384;
/**
 * The `typ` header values of a JWT access token (RFC 9068 §2.1 `at+jwt`, its media type, and the plain `JWT` many
 * issuers send), compared case-insensitively (RFC 7515 §4.1.9); another type (an ID token's, a DPoP proof's, a logout
 * token's) is a token of some other purpose.
 */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

type Jose = typeof JoseModule;

interface Verifier {
  jose: Jose;
  keys: JWTVerifyGetKey | KeyInput;
}

/**
 * OAuth 2.1 resource-server authentication with JWT access tokens: the signature (JWKS or static key), issuer,
 * audience and expiry are checked, and the principal is the token's `sub` (with `client_id`/`azp` as the client), so
 * tasks belong to it (spec R63). Refusals carry the `WWW-Authenticate` challenge with `resource_metadata`.
 */
export function jwtAuth(options: JwtAuthOptions): BearerAuth {
  if ((options.jwksUrl === undefined) === (options.key === undefined))
    throw new TypeError('jwtAuth needs exactly one of jwksUrl or key');
  const jwksUrl = options.jwksUrl === undefined ? undefined : new URL(options.jwksUrl);
  // jose is loaded on the first token, not with the package: a server without JWT auth starts (and recovers) sooner.
  let verifier: Promise<Verifier> | undefined;
  const loadVerifier = (): Promise<Verifier> =>
    (verifier ??= import('jose').then((jose) => ({
      jose,
      keys: jwksUrl ? jose.createRemoteJWKSet(jwksUrl) : (options.key as KeyInput),
    })));
  const protectedResource: ProtectedResourceOptions = {
    ...(options.resource !== undefined && { resource: options.resource }),
    authorizationServers: options.authorizationServers ?? [options.issuer],
    ...(options.scopesSupported && { scopesSupported: options.scopesSupported }),
    ...(options.resourceName !== undefined && { resourceName: options.resourceName }),
    ...(options.resourceDocumentation !== undefined && { resourceDocumentation: options.resourceDocumentation }),
  };
  const maxTokenBytes = options.maxTokenBytes ?? DEFAULT_MAX_TOKEN_BYTES;
  const required = options.requiredScopes ?? [];

  async function authenticate(request: Request): Promise<AuthInfoLike | undefined | Response> {
    const metadataUrl = protectedResourceMetadataUrl(
      resourceOf(protectedResource, request.url, new URL(request.url).pathname),
    );
    const refuse = (refusal: BearerRefusal) => bearerChallenge(refusal, metadataUrl, options.scopesSupported);
    const header = request.headers.get('authorization');
    const match = header ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header) : null;
    if (!header) return options.allowAnonymous ? undefined : refuse({ kind: 'missing' });
    if (!match) return refuse({ kind: 'invalid_token', description: 'Expected Authorization: Bearer <token>' });
    const token = match[1] as string;
    if (token.length > maxTokenBytes)
      return refuse({ kind: 'invalid_token', description: `The token is longer than ${maxTokenBytes} bytes` });
    const { jose, keys } = await loadVerifier();
    let payload: JWTPayload;
    let typ: unknown;
    try {
      ({
        payload,
        protectedHeader: { typ },
      } = await jose.jwtVerify(token, keys as KeyInput, {
        issuer: options.issuer,
        audience: options.audience,
        requiredClaims: ['exp'],
        clockTolerance: options.clockToleranceSec ?? 5,
        ...(options.algorithms && { algorithms: options.algorithms }),
      }));
    } catch (error) {
      const description = tokenFault(jose.errors, error);
      if (description === undefined) return keysUnavailable();
      return refuse({ kind: 'invalid_token', description });
    }
    if (typ !== undefined && !(typeof typ === 'string' && ACCESS_TOKEN_TYPES.has(typ.toLowerCase())))
      return refuse({
        kind: 'invalid_token',
        description: 'The token type (typ) is not accepted: it must be JWT or at+jwt',
      });
    // A `sub` that is not a string would make the principal anonymous (resolveCaller reads only a string): refused.
    if ('sub' in payload && (typeof payload.sub !== 'string' || payload.sub === ''))
      return refuse({ kind: 'invalid_token', description: 'The token sub claim must be a non-empty string' });
    const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp');
    if (payload.sub === undefined && clientId === undefined)
      return refuse({ kind: 'invalid_token', description: 'The token names no subject (sub) or client (client_id)' });
    const scopes = scopesOf(payload);
    const missing = required.filter((scope) => !scopes.includes(scope));
    if (missing.length > 0)
      return refuse({ kind: 'insufficient_scope', description: 'The token lacks a required scope', scope: required });
    return {
      token,
      ...(clientId !== undefined && { clientId }),
      scopes,
      expiresAt: payload.exp,
      extra: { sub: payload.sub, iss: payload.iss, claims: payload },
    };
  }

  return { authenticate, protectedResource };
}

/** Why the token itself is unacceptable, or undefined when the fault is ours (the key set could not be fetched). */
function tokenFault(errors: Jose['errors'], error: unknown): string | undefined {
  if (error instanceof errors.JWTExpired) return 'The token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `The token's ${error.claim} claim is not accepted`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The token signature is invalid';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return undefined;
  if (error instanceof errors.JOSEError) return 'The token is malformed or not signed by a trusted key';
  return undefined;
}

function keysUnavailable(): Response {
  return Response.json(
    { error: 'temporarily_unavailable', error_description: 'The signing keys could not be fetched' },
    { status: 503, headers: { 'retry-after': '5' } },
  );
}

/** A claim's value when it is a non-empty string (an empty client id would name nobody). */
function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `scope` (space-separated, RFC 9068) or `scp` (a list, as some issuers send). */
function scopesOf(payload: JWTPayload): string[] {
  const value = payload['scope'] ?? payload['scp'];
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  return Array.isArray(value) ? value.filter((scope): scope is string => typeof scope === 'string') : [];
}
