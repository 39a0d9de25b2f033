// npm run bench:faults — the fault scenarios (bench/faultScenarios.ts) one after another, each driving lifecycles
// at 10/s through its fault with real Redis, PostgreSQL, SQLite and processes, printing its counts and its recovery
// time. FAULTS=name,name runs only those. Goals: every count 0 (refusals aside) and recovery ≤ 10 s.
import { formatCounts, RECOVERY_BOUND_MS, runScenario, SCENARIOS, unavailableReason } from './faultScenarios.js';

const only = process.env['FAULTS']?.split(',');
let failed = false;
for (const scenario of SCENARIOS) {
  if (only && !only.includes(scenario.name)) continue;
  const missing = unavailableReason(scenario);
  if (missing) {
    console.log(`${scenario.name.padEnd(46)} skipped: ${missing}`);
    continue;
  }
  const counts = await runScenario(scenario);
  console.log(formatCounts(counts));
  for (const note of counts.notes) console.log(`    ${note}`);
  const bad = counts.lost + counts.stuck + counts.doubleRuns + counts.wrongErrors + counts.discarded + counts.phantoms;
  if (bad + counts.unanswered + counts.crashes > 0 || counts.recoveryMs > RECOVERY_BOUND_MS) failed = true;
}
process.exitCode = failed ? 1 : 0;
