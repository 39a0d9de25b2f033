import type { ServerResponse } from 'node:http';

export interface WriteNodeResponseOptions {
  /**
   * Bytes a response may have written but not yet taken by the client. Beyond this the client is not reading: the
   * connection is cut and the body cancelled, so its output is never buffered without limit.
   */
  maxPendingBytes: number;
  /** Called when a response is cut for not being read. */
  onSlowReader?: () => void;
}

/**
 * Writes a web-standard Response to node:http. SSE headers go out at once (a stream may carry nothing for a long
 * while, and a client waits on its headers). The body is read as fast as it comes, because the SDK's transports
 * enqueue without regard to backpressure: what the client has not taken yet is then all in `res.writableLength`, where
 * it can be measured and bounded.
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
  const cancel = () => void reader.cancel().catch(() => {});
  res.once('close', cancel);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || res.destroyed) break;
      res.write(value);
      if (res.writableLength > options.maxPendingBytes) {
        options.onSlowReader?.();
        res.destroy();
        cancel();
        return;
      }
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', cancel);
  }
}
