import { randomUUID } from 'node:crypto';

import type { TaskRecord } from '../../engine/index.js';
import { RequestCancelled, parseInputRequestId, type TaskPushView } from '../../dialects/index.js';
import {
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  isObject,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from '../../rpc/index.js';
import type { MessageExtraLike, TransportLike } from '../ServerLike.js';
import { RequestRouter, type RoutingHost } from './RequestRouter.js';
import { StreamRoutes, type RequestStream } from './StreamRoutes.js';
import { TaskFollower } from './TaskFollower.js';

export type { RequestStream } from './StreamRoutes.js';

/** What a connection needs from the runtime it belongs to: what routing needs, and its push and registry. */
export interface ConnectionHost extends RoutingHost {
  /** What a connection pushes about each task it created (spec R42). */
  readonly statusPush: TaskPushView;
  register(connection: TaskConnection): void;
  unregister(connection: TaskConnection): void;
}

/**
 * A transport wrapper between the SDK server and its real transport. Each request it receives goes to its
 * `RequestRouter` (a dialect answers it, or the SDK server gets it); everything else passes through,
 * with the dialects' decorations applied to the answer. Because it works on JSON-RPC messages, the same code serves
 * SDK v1 and v2 servers over stdio and Streamable HTTP.
 */
export class TaskConnection implements TransportLike {
  readonly id = randomUUID();
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JsonRpcMessage, extra?: MessageExtraLike) => void) | undefined;

  private readonly streams: StreamRoutes;
  private readonly router: RequestRouter;
  private readonly follower: TaskFollower;
  /** The protocol versions the SDK server told its transport it speaks (the `MCP-Protocol-Version` header check). */
  private supportedVersions: readonly string[] | undefined;
  private closed = false;
  /**
   * Notifications that go with no request travel on a stream the requestor opens (Streamable HTTP's GET stream):
   * `false` until it has opened one, and such notifications are dropped meanwhile, since no requestor could ever get
   * them (resuming that stream takes an event id of it). Undefined: the transport always carries them (stdio).
   */
  private standaloneHeard: boolean | undefined;

  constructor(
    readonly inner: TransportLike,
    private readonly host: ConnectionHost,
    options: { standaloneStream?: boolean } = {},
  ) {
    if (options.standaloneStream) this.standaloneHeard = false;
    this.streams = new StreamRoutes(this.standaloneHeard !== undefined);
    this.follower = new TaskFollower(
      host,
      (message) => void this.notify(message),
      () => this.standaloneHeard !== false,
    );
    this.router = new RequestRouter(
      host,
      {
        id: this.id,
        sessionId: () => this.inner.sessionId,
        closed: () => this.closed,
        isLongLived: () => isLongLived(this.inner),
        deliver: (request, extra) => this.onmessage?.(request, extra),
        // spec R42: the host's status push for every task this connection created, until it ends or the connection does.
        onTaskCreated: (record: TaskRecord) => {
          if (isLongLived(this.inner) && !this.closed) this.follower.follow(record);
        },
        notify: (message) => this.notify(message),
        notifyOn: (stream, message) => this.notifyOn(stream, message),
        fail: (error) => this.onerror?.(error),
      },
      this.streams,
    );
  }

  /** The requestor opened (or resumed) the stream that carries notifications without a request. */
  standaloneOpened(): void {
    if (this.standaloneHeard === false) this.standaloneHeard = true;
  }

  /** Requests whose answer is still to be decorated (`initialize`, `tools/list`, `server/discover`). */
  get pendingDecorations(): number {
    return this.router.pendingDecorations;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = [...versions];
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  /** Whether the SDK server speaks `version`; undefined until it told its transport. */
  speaksVersion(version: string): boolean | undefined {
    return this.supportedVersions?.includes(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.inbound(message, extra);
    const previousOnclose = this.inner.onclose;
    this.inner.onclose = () => {
      previousOnclose?.();
      this.handleClose();
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.host.register(this);
    await this.inner.start();
  }

  async send(
    message: JsonRpcMessage,
    options?: { relatedRequestId?: RequestId; [key: string]: unknown },
  ): Promise<void> {
    const out = this.router.decorated(message);
    const route = this.streams.take(out, options?.relatedRequestId);
    if ('stream' in route) return route.stream(out);
    const related = route.relatedRequestId;
    await this.inner.send(
      out,
      related === options?.relatedRequestId ? options : { ...options, relatedRequestId: related },
    );
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  /** Sends a notification to this requestor unless the connection is gone. */
  async notify(message: JsonRpcNotification, relatedRequestId?: RequestId): Promise<void> {
    if (relatedRequestId === undefined && this.standaloneHeard === false) return;
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    await this.notifyOn((m) => this.inner.send(m, options), message);
  }

  /**
   * Answers `request` on `stream` (its own response stream, not the SDK transport's) exactly as a request arriving
   * through the transport: the HTTP fast path. The router decides as for the transport's requests; with `forward`, one
   * no dialect answers goes to the SDK server as the transport would deliver it (with the extra `forward` gives), and
   * whatever the server sends for it goes to `stream`. False, with nothing done, when the request must take the
   * transport's way (`RequestRouter.route` says when).
   */
  answerOnStream(
    request: JsonRpcRequest,
    extra: MessageExtraLike,
    stream: RequestStream,
    forward?: () => MessageExtraLike,
  ): boolean {
    return this.router.route(request, extra, { via: 'fast', stream, forward });
  }

  /** A notification on one request's stream, unless the connection is gone. */
  private async notifyOn(stream: RequestStream, message: JsonRpcNotification): Promise<void> {
    if (this.closed) return;
    await stream(message).catch((error: unknown) => {
      this.host.logger.warn({ connection: this.id, error: String(error) }, 'could not send a notification');
    });
  }

  /** What the transport delivers: requests to the router, input answers to their task, the rest to the SDK server. */
  private inbound(message: JsonRpcMessage, extra?: MessageExtraLike): void {
    if (isJsonRpcResponse(message)) {
      const input = parseInputRequestId(message.id);
      if (input) return void this.router.routeInputAnswer(input, message, extra);
      return this.onmessage?.(message, extra);
    }
    if (isJsonRpcNotification(message)) {
      if (message.method === 'notifications/cancelled' && isObject(message.params)) {
        const cancelled = message.params['requestId'] as RequestId;
        // The SDK server sends no response to a request it cancels.
        this.streams.drop(cancelled);
        const reason = message.params['reason'];
        if (this.router.cancel(cancelled, new RequestCancelled(typeof reason === 'string' ? reason : undefined)))
          return;
      }
      return this.onmessage?.(message, extra);
    }
    if (!isJsonRpcRequest(message)) return this.onmessage?.(message, extra);
    // What goes with a request the transport delivered travels on its stream there (on HTTP: its SSE response).
    const stream: RequestStream = (out) => this.inner.send(out, { relatedRequestId: message.id });
    this.router.route(message, extra, { via: 'transport', stream });
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.streams.clear();
    this.router.abortAll(new Error('connection closed'));
    this.follower.stopAll();
    this.host.unregister(this);
    this.onclose?.();
  }
}

/** Streamable HTTP transports answer one request per exchange when they have no session. */
function isLongLived(transport: TransportLike): boolean {
  const methods = transport as unknown as Record<string, unknown>;
  return (
    transport.sessionId !== undefined ||
    (typeof methods['handleRequest'] !== 'function' && typeof methods['handleMessage'] !== 'function')
  );
}
