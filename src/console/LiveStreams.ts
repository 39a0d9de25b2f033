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
 * page read per stream per interval; at most `maxStreams` are open at once.
 */
export class LiveStreams {
  private readonly streams = new Set<() => void>();

  constructor(private readonly sources: LiveSources) {}

  open(params: URLSearchParams, signal: AbortSignal): Response {
    if (this.streams.size >= this.sources.maxStreams) {
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
          try {
            controller.close();
          } catch {
            // already closed by the reader
          }
        };
        this.streams.add(stop);
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
