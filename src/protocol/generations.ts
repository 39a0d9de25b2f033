/**
 * The three wire generations of tasks, each under one name used by server and client alike: `2025-11-25` core tasks,
 * `ext-2026` the `io.modelcontextprotocol/tasks` extension on the 2026-07-28 wire, `sep-1686` the proposal.
 */
export const TASK_GENERATIONS = ['2025-11-25', 'ext-2026', 'sep-1686'] as const;

export type TaskGeneration = (typeof TASK_GENERATIONS)[number];

/** Earlier spellings, still found in stored task records (`dialect`) and accepted wherever a name is read. */
export const GENERATION_ALIASES: Readonly<Record<string, TaskGeneration>> = {
  'core-2025-11-25': '2025-11-25',
  'ext-tasks': 'ext-2026',
};

/** The generation a name (or one of its earlier spellings) stands for, or undefined when it names none. */
export function generationOf(name: unknown): TaskGeneration | undefined {
  if (typeof name !== 'string') return undefined;
  if ((TASK_GENERATIONS as readonly string[]).includes(name)) return name as TaskGeneration;
  return Object.hasOwn(GENERATION_ALIASES, name) ? GENERATION_ALIASES[name] : undefined;
}
