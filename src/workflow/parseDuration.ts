const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** Milliseconds of a duration: a number of ms, or text such as `"250ms"`, `"5m"`, `"2 hours"`, `"1d"`. */
export function parseDuration(duration: number | string): number {
  if (typeof duration === 'number') {
    if (!Number.isFinite(duration) || duration < 0) throw new TypeError(`Invalid duration: ${duration}`);
    return Math.round(duration);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(duration);
  const unit = UNITS[(match?.[2] || 'ms').toLowerCase()];
  if (!match || unit === undefined) throw new TypeError(`Invalid duration: ${JSON.stringify(duration)}`);
  return Math.round(Number(match[1]) * unit);
}
