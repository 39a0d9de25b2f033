import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { EventSource } from '../protocol/index.js';
import type { DialectName, DialectPreference } from './DialectName.js';
import type { TargetDescriptor } from './TaskTarget.js';

/** One in-flight task, as much as a new host process needs to follow it again. */
export interface StoredHandle {
  taskId: string;
  dialect: DialectName;
  /** `targetKey()` of the server the task lives on. */
  target: string;
  /** How to reach that server again (no headers or environment: they may hold secrets). */
  endpoint: TargetDescriptor;
  toolName?: string;
  /** When this client created the record. */
  storedAt: string;
  /** A 2025-era Streamable HTTP session the task is bound to, resumed without a new handshake. */
  sessionId?: string;
  protocolVersion?: string;
  /** The server capabilities of that session; a resumed session has no `initialize` result to read them from. */
  serverCapabilities?: Record<string, unknown>;
  /** SEP-1686: the original request's wire id, which cancels the task. */
  requestId?: string | number;
  /** Extension: `inputRequests` keys already answered (spec E11). */
  answeredKeys?: string[];
  /** Where the task publishes its events, so a later process follows them too (Task Event Sources). */
  eventSource?: EventSource;
}

/**
 * A 2025-era Streamable HTTP session a host keeps using with one server. Without authentication the server owns
 * tasks by session (spec R63–R68), so reusing one session is what lets every run of a host see the tasks of the
 * ones before it.
 */
export interface StoredSession {
  /** `targetKey()` of the server. */
  target: string;
  /**
   * How the session was negotiated (the host's words, e.g. a dialect preference and protocol option): a run that
   * negotiates otherwise opens a session of its own, so one run's choice never carries over to the next.
   */
  preference: string;
  sessionId: string;
  protocolVersion?: string;
  /** The server capabilities of that session; a resumed session has no `initialize` result to read them from. */
  serverCapabilities?: Record<string, unknown>;
  storedAt: string;
}

/** The dialect a host saved on purpose for one server (used where it asks for `auto`). */
export interface StoredDialect {
  target: string;
  dialect: DialectPreference;
}

interface StoreFile {
  version: 1;
  handles: StoredHandle[];
  sessions?: StoredSession[];
  dialects?: StoredDialect[];
}

export interface HandleStoreOptions {
  /** The most handles the file keeps; a new one beyond it replaces the oldest stored. Default 1000. */
  maxHandles?: number;
}

/** Default of `HandleStoreOptions.maxHandles`. */
export const DEFAULT_MAX_HANDLES = 1000;

/**
 * Durable task handles in one JSON file, rewritten atomically (temp file, then rename), so in-flight task ids
 * survive a host restart (spec E7, R74). Writes within one process are serialised; across processes the last
 * writer wins, which only matters for hosts sharing a file concurrently. The file also keeps, per server, the session
 * a host reuses and a dialect saved on purpose.
 */
export class HandleStore {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxHandles: number;

  constructor(
    readonly path: string,
    options: HandleStoreOptions = {},
  ) {
    this.maxHandles = Math.max(1, options.maxHandles ?? DEFAULT_MAX_HANDLES);
  }

  async list(): Promise<StoredHandle[]> {
    await this.queue.catch(() => undefined);
    return (await this.read()).handles;
  }

  async get(taskId: string): Promise<StoredHandle | undefined> {
    return (await this.list()).find((handle) => handle.taskId === taskId);
  }

  /** Stores a handle; beyond `maxHandles`, the oldest stored ones make room (the file must not grow without bound). */
  put(handle: StoredHandle): Promise<void> {
    return this.mutate((handles) => {
      const others = handles.filter((existing) => existing.taskId !== handle.taskId);
      const room = this.maxHandles - 1;
      const kept =
        others.length <= room
          ? others
          : [...others].sort((a, b) => a.storedAt.localeCompare(b.storedAt)).slice(others.length - room);
      return [...kept, handle];
    });
  }

  update(taskId: string, patch: Partial<StoredHandle>): Promise<void> {
    return this.mutate((handles) =>
      handles.map((existing) => (existing.taskId === taskId ? { ...existing, ...patch, taskId } : existing)),
    );
  }

  remove(taskId: string): Promise<void> {
    return this.mutate((handles) => handles.filter((existing) => existing.taskId !== taskId));
  }

  /** The session this host last used with a server for a dialect preference. */
  async session(target: string, preference: string): Promise<StoredSession | undefined> {
    await this.queue.catch(() => undefined);
    return (await this.read()).sessions?.find((stored) => stored.target === target && stored.preference === preference);
  }

  async sessions(): Promise<StoredSession[]> {
    await this.queue.catch(() => undefined);
    return (await this.read()).sessions ?? [];
  }

  /** Records the session to reuse with a server for a preference, replacing the one before it. */
  putSession(session: StoredSession): Promise<void> {
    return this.mutateFile((file) => ({
      ...file,
      sessions: [
        ...(file.sessions ?? []).filter(
          (stored) => stored.target !== session.target || stored.preference !== session.preference,
        ),
        session,
      ],
    }));
  }

  /** The dialect saved for a server, if any. */
  async savedDialect(target: string): Promise<DialectPreference | undefined> {
    await this.queue.catch(() => undefined);
    return (await this.read()).dialects?.find((saved) => saved.target === target)?.dialect;
  }

  /** Saves the dialect to use with a server where `auto` is asked for; `auto` forgets a saved one. */
  saveDialect(target: string, dialect: DialectPreference): Promise<void> {
    return this.mutateFile((file) => ({
      ...file,
      dialects: [
        ...(file.dialects ?? []).filter((saved) => saved.target !== target),
        ...(dialect === 'auto' ? [] : [{ target, dialect }]),
      ],
    }));
  }

  private mutate(change: (handles: StoredHandle[]) => StoredHandle[]): Promise<void> {
    return this.mutateFile((file) => ({ ...file, handles: change(file.handles) }));
  }

  private mutateFile(change: (file: StoreFile) => StoreFile): Promise<void> {
    const next = this.queue
      .catch(() => undefined)
      .then(async () => {
        await this.write(change(await this.read()));
      });
    this.queue = next;
    return next;
  }

  private async read(): Promise<StoreFile> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, handles: [] };
      throw error;
    }
    const parsed = JSON.parse(text) as Partial<StoreFile>;
    return {
      version: 1,
      handles: Array.isArray(parsed.handles) ? parsed.handles : [],
      ...(Array.isArray(parsed.sessions) && { sessions: parsed.sessions }),
      ...(Array.isArray(parsed.dialects) && { dialects: parsed.dialects }),
    };
  }

  private async write(file: StoreFile): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.${randomUUID()}.tmp`;
    try {
      // Session ids grant access to the session's tasks: owner-only.
      await writeFile(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, this.path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}
