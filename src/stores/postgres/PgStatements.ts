import { createHash } from 'node:crypto';

import type pg from 'pg';

/** Distinct statement texts prepared per connection at most; a text past the bound runs unnamed. */
const MAX_PREPARED = 128;

/**
 * Named (prepared) statements: each connection parses and plans a statement's text once and then only binds and
 * executes it, which is most of what the database spends on the store's short, hot statements. The name is a hash of
 * the text, so two texts never share a name. `prepare: false` runs every statement unnamed, for poolers that cannot
 * keep prepared statements (PgBouncer in transaction mode before 1.21).
 */
export class PgStatements {
  private readonly names = new Map<string, string>();

  constructor(private readonly prepare: boolean) {}

  /** `text` and `values` as a query config, named when statements are prepared. */
  config(text: string, values: unknown[], types?: pg.CustomTypesConfig): pg.QueryConfig {
    const name = this.nameOf(text);
    return { text, values, ...(name !== undefined && { name }), ...(types !== undefined && { types }) };
  }

  private nameOf(text: string): string | undefined {
    if (!this.prepare) return undefined;
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_PREPARED) {
      name = `mcp_tasks_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      this.names.set(text, name);
    }
    return name;
  }
}
