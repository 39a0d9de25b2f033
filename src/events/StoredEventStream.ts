import { eventStreamTopic, type EngineLogger, type EventStreamLog, type TaskEventBus } from '../engine/index.js';
import { EventRing, type RingEntry } from './EventRing.js';

/** Entries read from the log per round trip while catching up. */
const PAGE = 500;
/** How often a stream re-reads its log when no wake came (a wake lost, or a store whose bus stays in-process). */
export const STREAM_POLL_MS = 1_000;

/** What a durable untasked type keeps in this process. */
export interface StoredStreamOptions {
  name: string;
  log: EventStreamLog;
  bus: TaskEventBus;
  /** The newest events the log and the ring keep (`retain.events`). */
  keep: number;
  maxAgeMs: number;
  now: () => number;
  logger: () => EngineLogger | undefined;
  pollMs?: number;
}

/**
 * An untasked type with `retain.durable`: its events live in the store's event stream log, numbered there across
 * every process, and this process's ring mirrors the newest of them, so poll, push and webhooks read it as they read
 * a process's own ring. The ring follows the log on the store's bus (another instance's or a queue worker's append
 * wakes it) and, should a wake be lost, every `pollMs`. Cursors name the log's epoch, so they stay valid across
 * restarts and on every instance.
 */
export class StoredEventStream {
  private following: Promise<void> | undefined;
  private again = false;
  private unsubscribe: () => void = () => {};
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly ring: EventRing,
    private readonly options: StoredStreamOptions,
  ) {}

  /** Opens the stream: the ring starts with the log's newest `keep` events and follows it from then on. */
  static async open(options: StoredStreamOptions): Promise<StoredEventStream> {
    const { name, log, keep } = options;
    const epoch = await log.epoch(name);
    const ring = new EventRing(name, epoch, keep, options.maxAgeMs, options.now);
    ring.startAt(Math.max(0, (await log.head(name)) - keep));
    const stream = new StoredEventStream(ring, options);
    await stream.catchUp();
    stream.unsubscribe = options.bus.subscribe(eventStreamTopic(name), () => stream.follow());
    stream.timer = setInterval(() => stream.follow(), options.pollMs ?? STREAM_POLL_MS);
    stream.timer.unref();
    return stream;
  }

  /** Stores an event (numbered by the log), tells the other processes, and answers it once the ring holds it. */
  async append(owner: string | null, data: Record<string, unknown>): Promise<RingEntry> {
    const { log, name, keep, bus, now } = this.options;
    const at = now();
    const seq = await log.append(name, { at, owner, data }, keep);
    void Promise.resolve(bus.publish(eventStreamTopic(name))).catch(() => {});
    await this.catchUp();
    // The ring may have dropped it already (a burst of other appends): what it was is known here anyway.
    return this.ring.at(seq) ?? this.ring.entryOf({ seq, at, owner, data });
  }

  /** Reads what the log holds past the ring's head into the ring; one read at a time, and one more if asked meanwhile. */
  catchUp(): Promise<void> {
    if (this.following) {
      this.again = true;
      return this.following.then(() => this.following ?? Promise.resolve());
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.again = false;
          for (;;) {
            const events = await this.options.log.read(this.options.name, this.ring.head, PAGE);
            for (const event of events) this.ring.accept(event);
            if (events.length < PAGE) break;
          }
        } while (this.again);
      } finally {
        this.following = undefined;
      }
    };
    this.following = run();
    return this.following;
  }

  /** Stops following; the ring's streams end (a restart, or the server closing). */
  close(): void {
    this.unsubscribe();
    clearInterval(this.timer);
    this.ring.close();
  }

  private follow(): void {
    this.catchUp().catch((error: unknown) =>
      this.options.logger()?.warn({ name: this.options.name, error: String(error) }, 'event stream read failed'),
    );
  }
}
