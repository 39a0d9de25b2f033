// CPU time of processes, read from /proc (Linux): per-task cost across every process a benchmark drives, which the
// machine's load moves far less than throughput.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU time (user + system, all threads) process `pid` has used so far, in ms; NaN where /proc cannot say. */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * The ids of the processes whose command name is `name` (e.g. every PostgreSQL backend, which a connection pool
 * opens and closes on its own): empty where /proc cannot be read.
 */
export function processesNamed(name: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/**
 * Starts counting the CPU time of the processes `pids()` names (read now and again at `stop()`); `stop()` returns what
 * they used meanwhile, in ms.
 */
export function cpuOf(pids: () => number[]): { stop(): number } {
  const before = new Map(pids().map((pid) => [pid, processCpuMs(pid)]));
  return {
    stop() {
      let used = 0;
      for (const pid of new Set([...before.keys(), ...pids()])) {
        const now = processCpuMs(pid);
        // A process that ended meanwhile took its figures with it: what it used since the start is not counted.
        if (!Number.isNaN(now)) used += now - (before.get(pid) ?? 0);
      }
      return used;
    },
  };
}
