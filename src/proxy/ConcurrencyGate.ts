/** Per-tool limits on calls forwarded at once; callers beyond the limit wait in arrival order. */
export class ConcurrencyGate {
  private readonly lanes = new Map<string, { active: number; waiting: Array<() => void> }>();

  /** Resolves with a release function once a slot is free; `limit` undefined means no limit. */
  async enter(name: string, limit: number | undefined, signal: AbortSignal): Promise<() => void> {
    if (limit === undefined) return () => {};
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = { active: 0, waiting: [] }));
    const current = lane;
    if (current.active >= limit) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = current.waiting.indexOf(go);
          if (index >= 0) current.waiting.splice(index, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        if (signal.aborted) return onAbort();
        current.waiting.push(go);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    current.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      current.active--;
      const next = current.waiting.shift();
      if (next) next();
      else if (current.active === 0) this.lanes.delete(name);
    };
  }
}
