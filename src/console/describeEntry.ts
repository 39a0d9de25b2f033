import type { TimelineEntry } from '../engine/index.js';

/**
 * One line saying what a timeline entry records. Self-contained (no imports, no closures): the console page embeds
 * its source, so the browser and `mcp-tasks get --timeline` word entries the same way.
 */
export function describeEntry(entry: TimelineEntry): string {
  switch (entry.kind) {
    case 'created':
      return `created (${entry.status ?? 'working'})${entry.message ? `: ${entry.message}` : ''}`;
    case 'status':
      return `status ${entry.from ?? '?'} → ${entry.status ?? '?'}`;
    case 'message':
      return `message: ${entry.message ?? ''}`;
    case 'started':
      return `attempt ${entry.attempt ?? '?'} started${entry.runner ? ` on ${entry.runner}` : ''}`;
    case 'runner':
      return `runner ${entry.runner ?? '?'}`;
    case 'input_requested':
      return `asked (${entry.method ?? 'input'})${entry.message ? `: ${entry.message}` : ''}`;
    case 'input_offered':
      return `offered ${entry.key ?? ''} (${entry.method ?? 'input'})${entry.message ? `: ${entry.message}` : ''}`;
    case 'input_answered':
      return `answered${entry.error ? ' with an error' : ''} (${entry.key ?? ''})`;
    case 'operator':
      return `${entry.message ?? 'acted'} (by ${entry.by ?? 'an operator'})`;
    case 'input_withdrawn':
      return `question withdrawn (${entry.key ?? ''})`;
    case 'suspended':
      return entry.wakeAt ? `suspended until ${new Date(entry.wakeAt).toISOString()}` : 'suspended';
    case 'resumed':
      return 'resumed';
    case 'recovered':
      return entry.action === 'fail' ? 'failed after its runner stopped' : 're-run after its runner stopped';
    case 'cancelled':
      return `cancelled by ${entry.by ?? 'unknown'}`;
    case 'run_ended':
      if (entry.ran === 'aborted' || entry.ran === 'handed-back')
        return `run ${entry.attempt ?? '?'} ${entry.ran === 'aborted' ? 'stopped' : 'handed back'} ${entry.stopMs ?? '?'} ms after it was told to stop`;
      return `run ${entry.attempt ?? '?'} ${entry.ran === 'parked' ? 'parked (waiting)' : 'finished'}`;
    case 'run_overdue':
      return `⚠ still running ${((entry.graceMs ?? 0) / 1000).toFixed(1)} s after it was told to stop: the work ignores the abort`;
    case 'rerun':
      return entry.direction === 'from'
        ? `re-run of ${entry.link ?? '?'}${entry.by ? ` by ${entry.by}` : ''}`
        : `re-run as ${entry.link ?? '?'}${entry.by ? ` by ${entry.by}` : ''}`;
    default:
      return String(entry.kind);
  }
}
