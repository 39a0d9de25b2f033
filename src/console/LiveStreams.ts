import type { ConsoleRole } from './consoleAuth.js';

/** Reads a live stream sends: the list for a query, or one task (undefined once it is gone). */
export interface LiveSources {
  refreshMs: number;
  maxStreams: number;
  list(params: URLSearchParams): Promise<unknown>;
  task(taskId: string): Promise<unknown>;
}

const KEEPALIVE_MS = 15_000;

/**
 * Server-sent events for the page: each stream re-reads its view every `refreshMs` and sends it when it changed.
 * Re-reading rather than listening works the same over every store and across processes, and costs one indexed
 * page read per stream per interval; at most `maxStreams` are open at once, of which the read-only token may hold
 * at most half, so the admin always has the other half.
 */
export class LiveStreams {
  private readonly streams = new Set<() => void>();
  private readonlyOpen = 0;

  constructor(private readonly sources: LiveSources) {}

  open(params: URLSearchParams, signal: AbortSignal, role: ConsoleRole = 'admin'): Response {
    const readonlyShare = Math.floor(this.sources.maxStreams / 2);
    if (this.streams.size >= this.sources.maxStreams || (role === 'readonly' && this.readonlyOpen >= readonlyShare)) {
      return new Response('Too many live streams', { status: 503, headers: { 'retry-after': '5' } });
    }
    const taskId = params.get('task');
    const read = taskId ? () => this.sources.task(taskId) : () => this.sources.list(params);
    const event = taskId ? 'task' : 'list';
    const encoder = new TextEncoder();
    let stop = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let last = '';
        let closed = false;
        let busy = false;
        const send = (text: string) => {
          if (!closed) controller.enqueue(encoder.encode(text));
        };
        const tick = async () => {
          if (busy || closed) return;
          busy = true;
          try {
            const data = JSON.stringify((await read()) ?? null);
            // The view's own clock (`now`) changes every read; compare without it.
            const key = data.replace(/"now":\d+/, '');
            if (key !== last) {
              last = key;
              send(`event: ${event}\ndata: ${data}\n\n`);
            }
          } catch (error) {
            send(`event: problem\ndata: ${JSON.stringify({ error: String(error) })}\n\n`);
          } finally {
            busy = false;
          }
        };
        const refresh = setInterval(() => void tick(), this.sources.refreshMs);
        const keepalive = setInterval(() => send(': keepalive\n\n'), KEEPALIVE_MS);
        stop = () => {
          if (closed) return;
          closed = true;
          clearInterval(refresh);
          clearInterval(keepalive);
          this.streams.delete(stop);
          if (role === 'readonly') this.readonlyOpen--;
          try {
            controller.close();
          } catch {
            // already closed by the reader
          }
        };
        this.streams.add(stop);
        if (role === 'readonly') this.readonlyOpen++;
        signal.addEventListener('abort', stop, { once: true });
        send('retry: 2000\n\n');
        void tick();
      },
      cancel: () => stop(),
    });
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    });
  }

  close(): void {
    for (const stop of [...this.streams]) stop();
  }
}
