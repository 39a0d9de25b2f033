import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a request may do: see everything, or also cancel. */
export type ConsoleRole = 'admin' | 'readonly';

export const CONSOLE_COOKIE = 'mcp_tasks_console';

/**
 * The console's tokens: the admin token (given, or generated at start) and an optional read-only one. A browser
 * presents a token once (`?token=`) and then carries a cookie holding a keyed digest of it, never the token itself.
 */
export class ConsoleAuth {
  readonly adminToken: string;
  private readonly readonlyToken: string | undefined;
  private readonly key = randomBytes(32);

  constructor(options: { token?: string; readonlyToken?: string }) {
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

  private digest(role: ConsoleRole): string {
    const token = role === 'admin' ? this.adminToken : (this.readonlyToken as string);
    return createHmac('sha256', this.key).update(`${role}:${token}`).digest('base64url');
  }
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
