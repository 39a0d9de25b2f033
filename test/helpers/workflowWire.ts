import { join } from 'node:path';

import { HttpFixture } from './rawWire.js';
import { requireService } from './services.js';
import { tempDir } from './tmp.js';

/**
 * The stores the workflow wire tests run on: SQLite always, PostgreSQL and Redis when their URLs are set (a missing
 * service fails the run in CI, test/helpers/services.ts).
 */
export const WORKFLOW_STORES: Array<[string, string | undefined]> = [
  ['SQLite', 'sqlite'],
  ['PostgreSQL', requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL')],
  ['Redis', requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL')],
];

/** A fixture environment on the store `spec` with a fresh SQLite file and step log, and short leases. */
export function workflowEnvironment(spec: string, extra: Record<string, string> = {}) {
  const dir = tempDir();
  return {
    MCP_TASKS_STORE: spec === 'sqlite' ? join(dir, 'workflow.db') : spec,
    MCP_TASKS_STEP_LOG: join(dir, 'steps.log'),
    MCP_TASKS_LEASE_MS: '500',
    ...extra,
  };
}

/** Runs `body` against one fixture server started with `env`, through the wire `connect` makes. */
export async function onFixture<W extends { close(): Promise<void> }>(
  env: Record<string, string>,
  connect: (fixture: HttpFixture) => Promise<W>,
  body: (wire: W) => Promise<void>,
): Promise<void> {
  const fixture = await HttpFixture.start({ env });
  try {
    const wire = await connect(fixture);
    await body(wire);
    await wire.close();
  } finally {
    await fixture.close();
  }
}

/** Kills the fixture's process with SIGKILL and waits for it to be gone. */
export async function kill9(fixture: HttpFixture): Promise<void> {
  const exited = new Promise((resolve) => fixture.child.once('exit', resolve));
  fixture.child.kill('SIGKILL');
  await exited;
}
