import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

import { InvalidCursorError } from './TaskError.js';
import type { ListPosition } from '../contracts/TaskStore.js';

const MAC_BYTES = 16;

interface CursorPayload {
  /** Short digest of the owner, so a cursor cannot be replayed by another owner. */
  o: string;
  c: number;
  i: string;
  /** Issue time, for staleness. */
  t: number;
}

/** Opaque, tamper-proof list cursors: a keyset position signed with the store's secret. */
export class CursorCodec {
  constructor(
    private readonly secret: Uint8Array,
    private readonly ttlMs: number,
  ) {}

  encode(owner: string, position: ListPosition, now: number): string {
    const payload: CursorPayload = { o: ownerDigest(owner), c: position.createdAt, i: position.taskId, t: now };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  decode(owner: string, cursor: unknown, now: number): ListPosition {
    if (typeof cursor !== 'string' || cursor.length > 1024) throw new InvalidCursorError('malformed');
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw new InvalidCursorError('malformed');
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = this.mac(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidCursorError('forged');
    let payload: CursorPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw new InvalidCursorError('malformed');
    }
    if (typeof payload.c !== 'number' || typeof payload.i !== 'string' || typeof payload.t !== 'number') {
      throw new InvalidCursorError('malformed');
    }
    if (payload.o !== ownerDigest(owner)) throw new InvalidCursorError('foreign');
    if (now - payload.t > this.ttlMs || payload.t - now > this.ttlMs) throw new InvalidCursorError('stale');
    return { createdAt: payload.c, taskId: payload.i };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, MAC_BYTES);
  }
}

function ownerDigest(owner: string): string {
  return createHash('sha256').update(owner).digest('base64url').slice(0, 12);
}
