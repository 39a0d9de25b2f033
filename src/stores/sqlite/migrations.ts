/** Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Never edit a released step. */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE mcp_tasks (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    idempotency_key TEXT,
    runner TEXT,
    lease_until INTEGER,
    version INTEGER NOT NULL,
    data TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX mcp_tasks_owner_created ON mcp_tasks (owner, created_at DESC, task_id DESC);
  CREATE UNIQUE INDEX mcp_tasks_owner_key ON mcp_tasks (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX mcp_tasks_lease ON mcp_tasks (lease_until) WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required');
  CREATE INDEX mcp_tasks_active_owner ON mcp_tasks (owner) WHERE status IN ('working', 'input_required');
  CREATE INDEX mcp_tasks_runner ON mcp_tasks (runner) WHERE runner IS NOT NULL;
  CREATE TABLE mcp_tasks_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
  `,
  // Stored tasks per owner, counted by triggers on every insert and delete (sweeps included), so the stored-task cap
  // reads one row instead of counting the owner's tasks.
  `
  CREATE TABLE mcp_tasks_owners (owner TEXT PRIMARY KEY, stored INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO mcp_tasks_owners (owner, stored) SELECT owner, count(*) FROM mcp_tasks GROUP BY owner;
  CREATE TRIGGER mcp_tasks_count_insert AFTER INSERT ON mcp_tasks BEGIN
    INSERT INTO mcp_tasks_owners (owner, stored) VALUES (NEW.owner, 1)
      ON CONFLICT (owner) DO UPDATE SET stored = stored + 1;
  END;
  CREATE TRIGGER mcp_tasks_count_delete AFTER DELETE ON mcp_tasks BEGIN
    UPDATE mcp_tasks_owners SET stored = stored - 1 WHERE owner = OLD.owner;
  END;
  `,
  // The console's tool and generation filters read an index: the tool called and the wire generation, written once
  // at insert (they never change), so updates of a task touch neither column nor its indexes.
  `
  ALTER TABLE mcp_tasks ADD COLUMN tool TEXT;
  ALTER TABLE mcp_tasks ADD COLUMN dialect TEXT;
  UPDATE mcp_tasks SET
    tool = CASE WHEN json_type(data, '$.request.params.name') = 'text' THEN json_extract(data, '$.request.params.name') END,
    dialect = json_extract(data, '$.dialect');
  CREATE INDEX mcp_tasks_tool_created ON mcp_tasks (tool, created_at DESC, task_id DESC);
  CREATE INDEX mcp_tasks_dialect_created ON mcp_tasks (dialect, created_at DESC, task_id DESC);
  `,
  // The table becomes a rowid table clustered by insertion (seq), the task id a unique index. Without rowid, the
  // whole record was the b-tree key, interior pages included: about 6 records per interior page made the tree 8
  // levels deep at 1M tasks and its interior pages outgrew the page cache. In insertion order, an owner's newest
  // tasks (a first list page) share a few hot pages instead of one random page each. `data` goes last: the indexed
  // columns of a record too large for its page are read without following its overflow pages. Rewrites the table
  // once (about 15 s per million tasks).
  `
  CREATE TABLE mcp_tasks_by_seq (
    seq INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    idempotency_key TEXT,
    runner TEXT,
    lease_until INTEGER,
    version INTEGER NOT NULL,
    tool TEXT,
    dialect TEXT,
    data TEXT NOT NULL
  );
  INSERT INTO mcp_tasks_by_seq
    (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, tool, dialect, data)
    SELECT task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, tool, dialect, data
    FROM mcp_tasks ORDER BY created_at, task_id;
  DROP TABLE mcp_tasks;
  ALTER TABLE mcp_tasks_by_seq RENAME TO mcp_tasks;
  CREATE UNIQUE INDEX mcp_tasks_id ON mcp_tasks (task_id);
  CREATE INDEX mcp_tasks_owner_created ON mcp_tasks (owner, created_at DESC, task_id DESC);
  CREATE UNIQUE INDEX mcp_tasks_owner_key ON mcp_tasks (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX mcp_tasks_lease ON mcp_tasks (lease_until) WHERE lease_until IS NOT NULL AND status IN ('working', 'input_required');
  CREATE INDEX mcp_tasks_active_owner ON mcp_tasks (owner) WHERE status IN ('working', 'input_required');
  CREATE INDEX mcp_tasks_runner ON mcp_tasks (runner) WHERE runner IS NOT NULL;
  CREATE INDEX mcp_tasks_tool_created ON mcp_tasks (tool, created_at DESC, task_id DESC);
  CREATE INDEX mcp_tasks_dialect_created ON mcp_tasks (dialect, created_at DESC, task_id DESC);
  CREATE TRIGGER mcp_tasks_count_insert AFTER INSERT ON mcp_tasks BEGIN
    INSERT INTO mcp_tasks_owners (owner, stored) VALUES (NEW.owner, 1)
      ON CONFLICT (owner) DO UPDATE SET stored = stored + 1;
  END;
  CREATE TRIGGER mcp_tasks_count_delete AFTER DELETE ON mcp_tasks BEGIN
    UPDATE mcp_tasks_owners SET stored = stored - 1 WHERE owner = OLD.owner;
  END;
  `,
  // Room at the stored-task bounds: when each task's outcome was delivered (fetched tasks are evicted first, earliest
  // fetched first, over these indexes), and the bytes of stored records per owner and in total, kept by the triggers
  // in the same transaction as every insert, delete and change of a record's size.
  `
  ALTER TABLE mcp_tasks ADD COLUMN fetched_at INTEGER;
  CREATE INDEX mcp_tasks_owner_fetched ON mcp_tasks (owner, fetched_at) WHERE fetched_at IS NOT NULL;
  CREATE INDEX mcp_tasks_fetched ON mcp_tasks (fetched_at) WHERE fetched_at IS NOT NULL;
  ALTER TABLE mcp_tasks_owners ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
  UPDATE mcp_tasks_owners SET bytes =
    coalesce((SELECT sum(octet_length(t.data)) FROM mcp_tasks t WHERE t.owner = mcp_tasks_owners.owner), 0);
  CREATE TABLE mcp_tasks_totals (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL);
  INSERT INTO mcp_tasks_totals (id, bytes) SELECT 1, coalesce(sum(octet_length(data)), 0) FROM mcp_tasks;
  DROP TRIGGER mcp_tasks_count_insert;
  DROP TRIGGER mcp_tasks_count_delete;
  CREATE TRIGGER mcp_tasks_count_insert AFTER INSERT ON mcp_tasks BEGIN
    INSERT INTO mcp_tasks_owners (owner, stored, bytes) VALUES (NEW.owner, 1, octet_length(NEW.data))
      ON CONFLICT (owner) DO UPDATE SET stored = stored + 1, bytes = bytes + excluded.bytes;
    UPDATE mcp_tasks_totals SET bytes = bytes + octet_length(NEW.data) WHERE id = 1;
  END;
  CREATE TRIGGER mcp_tasks_count_delete AFTER DELETE ON mcp_tasks BEGIN
    UPDATE mcp_tasks_owners SET stored = stored - 1, bytes = bytes - octet_length(OLD.data) WHERE owner = OLD.owner;
    UPDATE mcp_tasks_totals SET bytes = bytes - octet_length(OLD.data) WHERE id = 1;
  END;
  CREATE TRIGGER mcp_tasks_count_update AFTER UPDATE OF data ON mcp_tasks
    WHEN octet_length(NEW.data) <> octet_length(OLD.data) BEGIN
    UPDATE mcp_tasks_owners SET bytes = bytes + octet_length(NEW.data) - octet_length(OLD.data) WHERE owner = NEW.owner;
    UPDATE mcp_tasks_totals SET bytes = bytes + octet_length(NEW.data) - octet_length(OLD.data) WHERE id = 1;
  END;
  `,
];
