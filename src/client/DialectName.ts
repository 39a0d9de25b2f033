/**
 * The wire generation a handle speaks: `2025-11-25` core tasks, the `io.modelcontextprotocol/tasks` extension on the
 * 2026-07-28 wire, the SEP-1686 proposal, or `none` when the server offers no tasks and calls run plainly.
 */
export const DIALECT_NAMES = ['2025-11-25', 'ext-2026', 'sep-1686', 'none'] as const;

export type DialectName = (typeof DIALECT_NAMES)[number];

/** What a host may ask for: one dialect, or `auto` to pick from what the server advertises. */
export type DialectPreference = 'auto' | Exclude<DialectName, 'none'>;

export function isDialectPreference(value: unknown): value is DialectPreference {
  return value === 'auto' || value === '2025-11-25' || value === 'ext-2026' || value === 'sep-1686';
}
