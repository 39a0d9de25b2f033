// The statements a PostgreSQL server has run, for bench:distributed: by statement (pg_stat_statements, counted as each
// one ends) when the server preloads it, as scripts/services.sh does; otherwise the database's transactions
// (pg_stat_database), which each backend reports only when it idles, so a reading right after a run lags.
import pg from 'pg';

/** Running totals by kind: statement texts (schema names dropped), or `transactions` alone in the fallback. */
export interface PostgresCounts {
  source: 'statements' | 'transactions';
  totals: Map<string, number>;
}

/** The bench's own readings, left out of the counts. */
const OWN = '%pg_stat_statements%';

export async function postgresCounts(url: string): Promise<PostgresCounts> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const statements = await statementCounts(client);
    if (statements) return { source: 'statements', totals: statements };
    // Long enough for backends that just went idle to report (they do at most once a second).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    // This connection's own query is one of them; two readings each add one, so it cancels out.
    return { source: 'transactions', totals: new Map([['transactions', Number(rows[0]?.n ?? 0)]]) };
  } finally {
    await client.end();
  }
}

async function statementCounts(client: pg.Client): Promise<Map<string, number> | undefined> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query<{ query: string; calls: string }>(
      `SELECT query, calls FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE $1`,
      [OWN],
    );
    const totals = new Map<string, number>();
    for (const { query, calls } of rows) {
      const kind = kindOf(query);
      totals.set(kind, (totals.get(kind) ?? 0) + Number(calls));
    }
    return totals;
  } catch {
    // Not preloaded (the view refuses to answer) or not installed.
    return undefined;
  }
}

/** A statement's start, one line, without the bench's random schema, so each run's statements group the same. */
function kindOf(query: string): string {
  const text = query
    .replace(/\s+/g, ' ')
    .replace(/"?mcp_tasks_bench_[a-z0-9_]*"?\./g, '')
    .trim();
  return text.length > 72 ? `${text.slice(0, 71)}…` : text;
}
