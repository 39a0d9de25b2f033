import type Database from 'better-sqlite3';

/**
 * The side tables of one part of the store's SQLite file (timeline, step journal, event log): created when missing,
 * their statements prepared on the store's connection, and again once the store has opened a new one.
 */
export class PreparedTables<S> {
  private statements: S | undefined;
  private opened: Database.Database | undefined;

  constructor(
    private readonly owner: string,
    private readonly database: () => Database.Database | undefined,
    private readonly schema: string,
    private readonly prepare: (db: Database.Database) => S,
  ) {}

  /** Creates the tables and prepares the statements, once per connection. */
  open(): void {
    const db = this.database();
    if (!db) throw new Error(`${this.owner}: the store is not open`);
    // The store may have been closed and opened again on a new connection.
    if (this.opened === db) return;
    db.exec(this.schema);
    this.statements = this.prepare(db);
    this.opened = db;
  }

  /** The statements on the store's current connection; throws when open() has not run on it. */
  get(): S {
    if (!this.statements || this.opened !== this.database()) throw new Error(`${this.owner}: init() has not run`);
    return this.statements;
  }
}
