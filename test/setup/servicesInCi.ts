/**
 * Vitest global setup: in CI (`CI=true`) every suite backed by PostgreSQL or Redis must run, so a run without their
 * URLs fails before any test starts, whatever a test file does about a missing service (elsewhere
 * test/helpers/services.ts skips those suites with the reason).
 */
const SERVICES: Record<string, string> = {
  MCP_TASKS_TEST_POSTGRES_URL: 'PostgreSQL',
  MCP_TASKS_TEST_REDIS_URL: 'Redis',
};

export default function servicesInCi(): void {
  if (process.env['CI'] !== 'true') return;
  const missing = Object.keys(SERVICES).filter((name) => !process.env[name]);
  if (missing.length === 0) return;
  const names = missing.map((name) => `${name} (${SERVICES[name]})`).join(', ');
  throw new Error(`CI=true but ${names} not set: CI must run every suite (eval "$(scripts/services.sh start)")`);
}
