import { defaultRecoveryPolicy, type RecoveryPolicy } from '../engine/index.js';
import { upstreamTaskOf } from './createProxyWork.js';

/**
 * Recovery behind the proxy: a task that was following the upstream's own task is picked up again (its work
 * follows the same upstream task, nothing runs twice), up to `maxRuns` times; the rest as the library does it.
 */
export function bridgedRecovery(maxRuns = 3): RecoveryPolicy {
  const fallback = defaultRecoveryPolicy(maxRuns);
  return (task) => {
    if (upstreamTaskOf(task) === undefined) return fallback(task);
    if ((task.recoveries ?? 0) + 1 < maxRuns) return { action: 'rerun' };
    return { action: 'fail', statusMessage: `The proxy stopped ${maxRuns} times while following the upstream task.` };
  };
}
