import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { DialectName } from './DialectName.js';
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
}

interface StoreFile {
  version: 1;
  handles: StoredHandle[];
}

/**
 * Durable task handles in one JSON file, rewritten atomically (temp file, then rename), so in-flight task ids
 * survive a host restart (spec E7, R74). Writes within one process are serialised; across processes the last
 * writer wins, which only matters for hosts sharing a file concurrently.
 */
export class HandleStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  async list(): Promise<StoredHandle[]> {
    await this.queue.catch(() => undefined);
    return (await this.read()).handles;
  }

  async get(taskId: string): Promise<StoredHandle | undefined> {
    return (await this.list()).find((handle) => handle.taskId === taskId);
  }

  put(handle: StoredHandle): Promise<void> {
    return this.mutate((handles) => [...handles.filter((existing) => existing.taskId !== handle.taskId), handle]);
  }

  update(taskId: string, patch: Partial<StoredHandle>): Promise<void> {
    return this.mutate((handles) =>
      handles.map((existing) => (existing.taskId === taskId ? { ...existing, ...patch, taskId } : existing)),
    );
  }

  remove(taskId: string): Promise<void> {
    return this.mutate((handles) => handles.filter((existing) => existing.taskId !== taskId));
  }

  private mutate(change: (handles: StoredHandle[]) => StoredHandle[]): Promise<void> {
    const next = this.queue
      .catch(() => undefined)
      .then(async () => {
        const file = await this.read();
        await this.write({ version: 1, handles: change(file.handles) });
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
    return { version: 1, handles: Array.isArray(parsed.handles) ? parsed.handles : [] };
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
