import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a request may do: see everything, or also cancel. */
export type ConsoleRole = 'admin' | 'readonly';

export const CONSOLE_COOKIE = 'mcp_tasks_console';
/** The shortest console token accepted: shorter ones are within reach of guessing, throttle or not. */
export const MIN_CONSOLE_TOKEN_LENGTH = 16;

/**
 * The console's tokens: the admin token (given, or generated at start) and an optional read-only one. A browser
 * presents a token once (`?token=`) and then carries a cookie holding a keyed digest of it, never the token itself.
 */
export class ConsoleAuth {
  readonly adminToken: string;
  private readonly readonlyToken: string | undefined;
  private readonly key = randomBytes(32);

  constructor(options: { token?: string; readonlyToken?: string }) {
    checkLength('token', options.token);
    checkLength('read-only token', options.readonlyToken);
    this.adminToken = options.token || randomBytes(24).toString('base64url');
    this.readonlyToken = options.readonlyToken || undefined;
    if (this.readonlyToken === this.adminToken)
      throw new Error('the read-only console token must differ from the admin token');
  }

  /** The role a presented token grants, if any. */
  roleOfToken(token: string | undefined): ConsoleRole | undefined {
    if (!token) return undefined;
    if (same(token, this.adminToken)) return 'admin';
    if (this.readonlyToken !== undefined && same(token, this.readonlyToken)) return 'readonly';
    return undefined;
  }

  /** The cookie value standing for a token (valid while this process runs). */
  cookieFor(role: ConsoleRole): string {
    return `${role}.${this.digest(role)}`;
  }

  roleOfCookie(value: string | undefined): ConsoleRole | undefined {
    if (!value) return undefined;
    const [role] = value.split('.', 1);
    if (role !== 'admin' && role !== 'readonly') return undefined;
    if (role === 'readonly' && this.readonlyToken === undefined) return undefined;
    return same(value, this.cookieFor(role)) ? role : undefined;
  }

  /** The role of a request: its Bearer token, else its cookie. */
  roleOf(request: Request): ConsoleRole | undefined {
    const header = request.headers.get('authorization');
    if (header !== null) {
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      return this.roleOfToken(match?.[1]);
    }
    return this.roleOfCookie(readCookie(request.headers.get('cookie'), CONSOLE_COOKIE));
  }

  /** Whether the request carries a credential at all (a token or the cookie), right or wrong. */
  presents(request: Request): boolean {
    return (
      request.headers.has('authorization') || readCookie(request.headers.get('cookie'), CONSOLE_COOKIE) !== undefined
    );
  }

  private digest(role: ConsoleRole): string {
    const token = role === 'admin' ? this.adminToken : (this.readonlyToken as string);
    return createHmac('sha256', this.key).update(`${role}:${token}`).digest('base64url');
  }
}

/** A configured token shorter than the minimum stops the start, with what to do about it. */
function checkLength(name: string, token: string | undefined): void {
  if (!token || token.length >= MIN_CONSOLE_TOKEN_LENGTH) return;
  throw new Error(
    `the console ${name} is ${token.length} characters long; it must have at least ${MIN_CONSOLE_TOKEN_LENGTH} ` +
      '(e.g. `openssl rand -base64 24`), or be left unset to have one generated',
  );
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}
