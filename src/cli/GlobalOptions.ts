/** Options every command accepts (commander collects them before or after the command name). */
export interface GlobalOptions {
  url?: string;
  header: string[];
  dialect: string;
  protocol?: string;
  /** A path, or `false` with `--no-store`. */
  store: string | false;
  json?: boolean;
  ttl?: string;
  input: boolean;
  verbose?: boolean;
  /** `--save-dialect`: keep this run's `--dialect` as the server's default. */
  saveDialect?: boolean;
}
