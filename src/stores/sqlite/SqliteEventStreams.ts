import { randomBytes } from 'node:crypto';

import type Database from 'better-sqlite3';

import type { EventStreamLog, NewStreamedEvent, StreamedEvent } from '../../engine/index.js';
import type { GroupCommit } from './GroupCommit.js';
import { PreparedTables } from './PreparedTables.js';

/**
 * The streams' tables, created when missing beside the task table. The next seq is kept on the stream's row rather
 * than derived from its entries: the oldest entries are dropped, and a stream whose entries were all dropped must
 * go on numbering where it was.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS mcp_tasks_event_streams (
    stream TEXT PRIMARY KEY,
    epoch TEXT NOT NULL,
    next_seq INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS mcp_tasks_stream_events (
    stream TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    owner TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (stream, seq)
  ) WITHOUT ROWID;
`;

interface Row {
  seq: number;
  at: number;
  owner: string | null;
  data: string;
}

/** The untasked event types' bounded logs in the store's SQLite file: one row per stream, one per kept entry. */
export class SqliteEventStreams implements EventStreamLog {
  private readonly tables: PreparedTables<ReturnType<typeof prepare>>;

  /** Writes share the store's group commit. */
  constructor(
    database: () => Database.Database | undefined,
    private readonly commits: GroupCommit,
  ) {
    this.tables = new PreparedTables('SqliteEventStreams', database, SCHEMA, prepare);
  }

  async init(): Promise<void> {
    this.tables.open();
  }

  async epoch(stream: string): Promise<string> {
    const s = this.stmts();
    const known = s.epoch.get(stream) as string | undefined;
    if (known !== undefined) return known;
    // The first process to ask makes it; one that raced it ahead keeps its own, and both read back the stored one.
    return this.commits.run(() => {
      s.ensure.run(stream, newEpoch());
      return s.epoch.get(stream) as string;
    });
  }

  async append(stream: string, event: NewStreamedEvent, keep: number): Promise<number> {
    const s = this.stmts();
    const entry = [event.at, event.owner, JSON.stringify(event.data)] as const;
    // Durable before it is announced: a reader told of it must find it after a crash too. The stream row's update
    // takes the write lock, so appenders of every process are numbered one after another.
    return this.commits.run(() => {
      s.ensure.run(stream, newEpoch());
      const seq = s.take.get(stream) as number;
      s.insert.run(stream, seq, ...entry);
      s.trim.run(stream, seq - Math.max(1, keep));
      return seq;
    });
  }

  async read(stream: string, from: number, limit: number): Promise<StreamedEvent[]> {
    if (limit <= 0) return [];
    const rows = this.stmts().read.all(stream, Math.max(0, from), limit) as Row[];
    return rows.map((row) => ({
      seq: row.seq,
      at: row.at,
      owner: row.owner,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }));
  }

  async head(stream: string): Promise<number> {
    return (this.stmts().head.get(stream) as number | undefined) ?? 0;
  }

  private stmts(): ReturnType<typeof prepare> {
    return this.tables.get();
  }
}

function newEpoch(): string {
  return randomBytes(6).toString('base64url');
}

function prepare(db: Database.Database) {
  return {
    epoch: db.prepare('SELECT epoch FROM mcp_tasks_event_streams WHERE stream = ?').pluck(),
    ensure: db.prepare('INSERT OR IGNORE INTO mcp_tasks_event_streams (stream, epoch, next_seq) VALUES (?, ?, 0)'),
    take: db
      .prepare('UPDATE mcp_tasks_event_streams SET next_seq = next_seq + 1 WHERE stream = ? RETURNING next_seq - 1')
      .pluck(),
    insert: db.prepare('INSERT INTO mcp_tasks_stream_events (stream, seq, at, owner, data) VALUES (?, ?, ?, ?, ?)'),
    trim: db.prepare('DELETE FROM mcp_tasks_stream_events WHERE stream = ? AND seq <= ?'),
    read: db.prepare(
      'SELECT seq, at, owner, data FROM mcp_tasks_stream_events WHERE stream = ? AND seq >= ? ORDER BY seq LIMIT ?',
    ),
    head: db.prepare('SELECT next_seq FROM mcp_tasks_event_streams WHERE stream = ?').pluck(),
  };
}
