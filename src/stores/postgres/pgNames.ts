import { createHash } from 'node:crypto';

/** Quoted SQL names of one store's tables, derived from its schema and table prefix. */
export interface PgNames {
  schema: string;
  /** The tasks table, schema-qualified and quoted. */
  tasks: string;
  meta: string;
  migrations: string;
  /** Stored tasks per owner, kept by a trigger on the tasks table (for the stored-task cap). */
  owners: string;
  /** A schema-qualified name of the store's own (functions). */
  qualified(suffix: string): string;
  /** An index name (unqualified: indexes live in their table's schema). */
  index(suffix: string): string;
  /** Default NOTIFY channel: per schema and prefix, so stores on one database do not wake each other's waiters. */
  channel: string;
}

const PREFIX = /^[a-z_][a-z0-9_]{0,39}$/;

export function pgNames(schema: string, tablePrefix: string): PgNames {
  // The prefix is spliced into index names; keep it a plain identifier well under the 63-byte limit.
  if (!PREFIX.test(tablePrefix)) {
    throw new Error(`tablePrefix must match ${PREFIX} (got ${JSON.stringify(tablePrefix)})`);
  }
  if (schema.length === 0) throw new Error('schema must not be empty');
  const s = quoteIdent(schema);
  const plain = schema === 'public' ? tablePrefix : `${tablePrefix}:${schema}`;
  return {
    schema: s,
    tasks: `${s}.${quoteIdent(tablePrefix)}`,
    meta: `${s}.${quoteIdent(`${tablePrefix}_meta`)}`,
    migrations: `${s}.${quoteIdent(`${tablePrefix}_migrations`)}`,
    owners: `${s}.${quoteIdent(`${tablePrefix}_owners`)}`,
    qualified: (suffix) => `${s}.${quoteIdent(`${tablePrefix}_${suffix}`)}`,
    index: (suffix) => quoteIdent(`${tablePrefix}_${suffix}`),
    // Channel names are limited to 63 bytes; long ones are shortened to a stable hash.
    channel:
      Buffer.byteLength(plain) <= 63
        ? plain
        : `${tablePrefix.slice(0, 20)}_${createHash('sha256').update(plain).digest('hex').slice(0, 32)}`,
  };
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
