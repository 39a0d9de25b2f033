/**
 * Verification POSTs per destination host (spec V105 SHOULD): at most `perMinute` in any rolling minute from this
 * process, so subscribing cannot be used to make the server hammer a host. Hosts are forgotten once their minute has
 * passed, and at most `maxHosts` are tracked (the oldest go first).
 */
export class VerificationBudget {
  private readonly sent = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly maxHosts = 10_000,
  ) {}

  /** Counts one POST to `host` at `now`; false (nothing counted) when the host's budget is spent. */
  take(host: string, now: number): boolean {
    const recent = (this.sent.get(host) ?? []).filter((at) => now - at < 60_000);
    if (recent.length >= this.perMinute) {
      this.sent.set(host, recent);
      return false;
    }
    recent.push(now);
    this.sent.delete(host); // re-inserted last: the Map's order is the least recently used first
    this.sent.set(host, recent);
    while (this.sent.size > this.maxHosts) this.sent.delete(this.sent.keys().next().value as string);
    return true;
  }
}
