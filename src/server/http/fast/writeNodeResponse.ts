import type { ServerResponse } from 'node:http';

export interface WriteNodeResponseOptions {
  /**
   * Bytes of a response produced but not yet taken by the client. Beyond this (not counting the newest message, so
   * one message larger than the cap still goes through) the connection is cut and the body cancelled, so output is
   * never buffered without limit.
   */
  maxPendingBytes: number;
  /** A client that takes nothing of a response's pending output for this long is cut off the same way. */
  slowReaderMs: number;
  /** Called when a response is cut for not being read. */
  onSlowReader?: () => void;
}

/**
 * Writes a web-standard Response to node:http. SSE headers go out at once (a stream may carry nothing for a long
 * while, and a client waits on its headers). The body is taken from its source as fast as it comes, because the SDK's
 * transports enqueue without regard to backpressure: what the client has not read yet is then all here (a queue plus
 * `res.writableLength`), where it is measured and bounded.
 */
export async function writeNodeResponse(
  response: Response,
  res: ServerResponse,
  options: WriteNodeResponseOptions,
): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  if (headers['content-type']?.startsWith('text/event-stream')) res.flushHeaders();
  const reader = response.body.getReader();
  const queue: Uint8Array[] = [];
  let queued = 0;
  let ended = false;
  let failed = false;
  let wake: (() => void) | undefined;
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  const sleep = (ms?: number) =>
    new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const cut = () => {
    options.onSlowReader?.();
    res.destroy();
  };
  const stop = () => {
    void reader.cancel().catch(() => {});
    signal();
  };
  res.once('close', stop);
  res.on('drain', signal);

  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || res.destroyed) break;
        if (queued + res.writableLength > options.maxPendingBytes) {
          cut();
          break;
        }
        queue.push(value);
        queued += value.byteLength;
        signal();
      }
    } catch {
      failed = true;
    }
    ended = true;
    signal();
  })();

  while (!res.destroyed) {
    const chunk = queue.shift();
    if (chunk === undefined) {
      if (ended) break;
      await sleep();
      continue;
    }
    queued -= chunk.byteLength;
    res.write(chunk);
    let unread = res.writableLength;
    while (res.writableNeedDrain && !res.destroyed) {
      const since = Date.now();
      await sleep(options.slowReaderMs);
      if (!res.writableNeedDrain || Date.now() - since < options.slowReaderMs) continue;
      // Woken by the timer: the client must have taken something meanwhile.
      if (res.writableLength >= unread) cut();
      unread = res.writableLength;
    }
  }
  res.off('close', stop);
  res.off('drain', signal);
  if (res.destroyed) stop();
  else if (failed) res.destroy();
  else res.end();
}
