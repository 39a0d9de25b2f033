import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';

import type { TaskConnection } from '../connection/TaskConnection.js';
import type { FastTaskStream } from './fast/FastTaskStream.js';
import type { MemoryEventStore } from './MemoryEventStore.js';
import { withBodyEnd } from './fast/withBodyEnd.js';

export interface SessionLimits {
  /** Open 2025-era sessions in all. */
  maxSessions: number;
  /** Open sessions of one client (its principal, else its remote address). */
  maxSessionsPerClient: number;
  /** A session with no request in flight for this long is closed. */
  idleMs: number;
}

export interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly events: MemoryEventStore;
  /** The tasks side of the session's server instance, which answers the requests of the fast path. */
  readonly connection: TaskConnection;
  /** Streams of requests answered on the fast path and not answered yet, by stream id (for Last-Event-ID). */
  readonly streams: Map<string, FastTaskStream>;
  readonly client: string;
  /** The principal that opened the session (`principalOwnerOf`), undefined for anonymous: only it may use it. */
  readonly principal: string | undefined;
  /** Last time a request began or ended. */
  seen: number;
  /** Requests whose answer (stream) is still open: a session waiting on a long tasks/result is not idle. */
  inFlight: number;
}

/** Why a new session is refused, or undefined with room made for it. */
export type Admission = { refused: string } | { refused?: undefined; release(): void };

/**
 * The open 2025-era sessions, bounded: in all (`maxSessions`, then new sessions are refused), per client (a client at
 * its cap loses its own least recently used idle session, so a client leaking sessions only hurts itself), and in
 * time (`idleMs`).
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  /** Sessions admitted whose initialize is still being answered. */
  private readonly reserved = new Map<string, number>();
  private reservedTotal = 0;

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /**
   * The session `id` for a request of `principal` (undefined: anonymous): a session another principal opened is as
   * unknown as a missing one, so a session id alone neither opens its stream nor closes it.
   */
  getFor(id: string, principal: string | undefined): Session | undefined {
    const session = this.sessions.get(id);
    return session?.principal === principal ? session : undefined;
  }

  admit(client: string): Admission {
    const owned = [...this.sessions.values()].filter((session) => session.client === client);
    if (owned.length + (this.reserved.get(client) ?? 0) >= this.limits.maxSessionsPerClient) {
      const idle = owned.filter((session) => session.inFlight === 0).sort((a, b) => a.seen - b.seen)[0];
      if (!idle) return { refused: `Too many sessions for this client: at most ${this.limits.maxSessionsPerClient}` };
      this.close(idle);
    }
    if (this.sessions.size + this.reservedTotal >= this.limits.maxSessions)
      return { refused: `Too many sessions: at most ${this.limits.maxSessions} are open` };
    this.reserved.set(client, (this.reserved.get(client) ?? 0) + 1);
    this.reservedTotal++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.reservedTotal--;
        const left = (this.reserved.get(client) ?? 1) - 1;
        if (left > 0) this.reserved.set(client, left);
        else this.reserved.delete(client);
      },
    };
  }

  add(id: string, session: Session): void {
    this.sessions.set(id, session);
  }

  /** Forgets a session (its transport closed). */
  delete(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const stream of session.streams.values()) stream.close();
    session.streams.clear();
    session.events.clear();
  }

  /** Marks a request of `session` in flight until its answer's body ends; returns the answer to send. */
  track(session: Session, response: Response): Response {
    session.seen = this.now();
    if (!response.body) return response;
    return withBodyEnd(response, this.begin(session));
  }

  /** Marks a request of `session` in flight; call the function returned (once) when its answer is done. */
  begin(session: Session): () => void {
    session.seen = this.now();
    session.inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.inFlight--;
      session.seen = this.now();
    };
  }

  /** Closes the sessions idle for longer than `idleMs`. */
  sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const session of [...this.sessions.values()])
      if (session.inFlight === 0 && session.seen < cutoff) this.close(session);
  }

  async closeAll(): Promise<void> {
    const open = [...this.sessions.values()];
    await Promise.allSettled(open.map((session) => this.close(session)));
  }

  private close(session: Session): Promise<void> {
    if (session.transport.sessionId) this.delete(session.transport.sessionId);
    return session.transport.close().catch(() => {});
  }
}
