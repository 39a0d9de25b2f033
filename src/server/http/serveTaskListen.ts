import { EXT_STATUS_PUSH, pushTaskChanges, type Caller } from '../../dialects/index.js';
import type { TaskEngine } from '../../engine/index.js';
import {
  declaresTasksExtension,
  ExtMethod,
  missingTasksExtensionData,
  SUBSCRIPTION_ID_META,
} from '../../protocol/index.js';
import { ErrorCodes, isObject, type JsonRpcRequest, type RequestId } from '../../rpc/index.js';

const KEEP_ALIVE_MS = 15_000;

/** The task ids a `subscriptions/listen` request asks about, or undefined when it asks about none. */
export function listenTaskIds(message: unknown): string[] | undefined {
  if (!isObject(message) || message['method'] !== ExtMethod.listen || !isObject(message['params'])) return undefined;
  const notifications = message['params']['notifications'];
  if (!isObject(notifications) || !Array.isArray(notifications['taskIds'])) return undefined;
  return notifications['taskIds'].filter((id): id is string => typeof id === 'string');
}

/** The same listen request without `taskIds`, for the SDK to serve the other notifications it asks for. */
export function withoutTaskIds(message: JsonRpcRequest): JsonRpcRequest {
  const params = message.params as Record<string, unknown>;
  const { taskIds: _taskIds, ...others } = params['notifications'] as Record<string, unknown>;
  return { ...message, params: { ...params, notifications: others } };
}

/**
 * Serves `notifications/tasks` for the task ids a 2026-07-28 client subscribes to (SEP-2663 status push): the
 * acknowledgement names the ids the caller may see (others are silently not honored, so nothing leaks), then each
 * change of those tasks is pushed as a full DetailedTask until the task ends or the client closes the stream. The
 * SDK's stream for the same listen (`sdkStream`, without the task ids) is merged in: it carries the acknowledgement
 * and any other notifications asked for.
 */
export async function serveTaskListen(
  engine: TaskEngine,
  caller: Caller,
  message: JsonRpcRequest,
  taskIds: string[],
  sdkStream: Response,
): Promise<Response> {
  // spec E14: a client that does not declare the extension cannot ask for task notifications.
  if (!declaresTasksExtension(message.params)) {
    await sdkStream.body?.cancel().catch(() => {});
    return Response.json({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: ErrorCodes.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message: 'Missing required client capability',
        data: missingTasksExtensionData(),
      },
    });
  }
  const honored: string[] = [];
  for (const taskId of new Set(taskIds)) {
    if (
      await engine.get(caller.scope, taskId).then(
        () => true,
        () => false,
      )
    )
      honored.push(taskId);
  }
  const subscriptionId: RequestId = message.id;
  const encoder = new TextEncoder();
  const stops: Array<() => void> = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const write = (frame: string) => {
    if (!closed) controller.enqueue(encoder.encode(frame));
  };
  const notify = (method: string, params: Record<string, unknown>) =>
    write(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: { [SUBSCRIPTION_ID_META]: subscriptionId } } })}\n\n`,
    );
  const sdkReader = sdkStream.body?.getReader();
  const close = () => {
    if (closed) return;
    closed = true;
    for (const stop of stops.splice(0)) stop();
    // The SDK's stream would otherwise live on (keep-alives) after the client left.
    void sdkReader?.cancel().catch(() => {});
    try {
      controller.close();
    } catch {
      // already closed by the consumer
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    async start(streamController) {
      controller = streamController;
      // The SDK's acknowledgement comes first on its stream; ours is folded into it.
      if (sdkReader) void pipeSdkStream(sdkReader, honored, write, close);
      if (honored.length === 0) return;
      for (const taskId of honored) stops.push(pushTaskChanges(engine, taskId, EXT_STATUS_PUSH, notify));
      const keepAlive = setInterval(() => write(': keepalive\n\n'), KEEP_ALIVE_MS);
      keepAlive.unref();
      stops.push(() => clearInterval(keepAlive));
    },
    cancel() {
      close();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
    },
  });
}

/**
 * Copies the SDK's listen stream, adding our honored task ids to its acknowledgement frame. The SDK ends its stream
 * at once (with the listen's final response) when it honors nothing itself; with task ids honored here, that end is
 * dropped and the subscription lives on until the client leaves.
 */
async function pipeSdkStream(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  honored: string[],
  write: (frame: string) => void,
  close: () => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let acknowledged = false;
  let keepOpen = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        let frame = buffer.slice(0, boundary + 2);
        buffer = buffer.slice(boundary + 2);
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        const message = data === undefined ? undefined : (JSON.parse(data) as Record<string, unknown>);
        if (!acknowledged && message?.['method'] === ExtMethod.acknowledged) {
          acknowledged = true;
          const params = message['params'] as { notifications: Record<string, unknown> };
          keepOpen = honored.length > 0 && Object.keys(params.notifications).length === 0;
          params.notifications = { ...params.notifications, taskIds: honored };
          frame = `event: message\ndata: ${JSON.stringify(message)}\n\n`;
        } else if (keepOpen && message !== undefined && !('method' in message)) continue;
        write(frame);
      }
    }
  } catch {
    // the SDK's stream failed or was cancelled: ours ends with it
    keepOpen = false;
  }
  if (!keepOpen) close();
}
