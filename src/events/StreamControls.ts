/** What a conformance control asks of the live streams of one event type (EVENTS-SPEC §14). */
export type StreamControl = 'error' | 'gap' | 'terminate';

/**
 * The live `events/stream`s of this process by event type, for the conformance diagnostic controls: each stream
 * listens for its type while it is open; a control reaches every stream of the type open at that moment.
 */
export class StreamControls {
  private readonly listeners = new Map<string, Set<(control: StreamControl) => void>>();

  /** Hears the controls sent to `name`'s streams; returns the removal. */
  listen(name: string, listener: (control: StreamControl) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(name);
    };
  }

  /** Sends `control` to every open stream of `name`; returns how many heard it. */
  send(name: string, control: StreamControl): number {
    const set = [...(this.listeners.get(name) ?? [])];
    for (const listener of set) listener(control);
    return set.length;
  }
}
