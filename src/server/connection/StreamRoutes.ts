import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage, type RequestId } from '../../rpc/index.js';

/** Where the messages that go with one request travel: its related requests and notifications, then its response. */
export type RequestStream = (message: JsonRpcMessage) => Promise<void>;

/** Where a message the SDK server sends goes: a fast-path request's own stream, or the transport with a relation. */
export type StreamRoute = { readonly stream: RequestStream } | { readonly relatedRequestId: RequestId | undefined };

/**
 * Which stream each message the SDK server sends takes, for the requests it is answering. A request the fast path
 * handed on has its own stream (until its response); one the transport delivered goes back through the transport.
 */
export class StreamRoutes {
  /**
   * Requests of the fast path the SDK server answers, with the stream their messages go to instead of the transport
   * (until the response; a cancelled request's entry goes with its cancellation, since it gets no response).
   */
  private readonly routed = new Map<RequestId, RequestStream>();
  /** Requests the transport delivered that the SDK server is still answering (not the fast path's: see `routed`). */
  private readonly passedOn = new Set<RequestId>();

  /** @param impliesRelations the session's request streams are always SSE (this runtime's own HTTP sessions). */
  constructor(private readonly impliesRelations: boolean) {}

  /** The SDK server answers `id`: on `stream` when the fast path handed it on, else on the transport. */
  passOn(id: RequestId, stream?: RequestStream): void {
    if (stream) this.routed.set(id, stream);
    else this.passedOn.add(id);
  }

  /** A fast-path request with this id is still being answered by the SDK server. */
  onStream(id: RequestId): boolean {
    return this.routed.has(id);
  }

  /** The request ends without a response (the SDK server sends none to a request it cancels). */
  drop(id: RequestId): void {
    this.routed.delete(id);
    this.passedOn.delete(id);
  }

  clear(): void {
    this.routed.clear();
    this.passedOn.clear();
  }

  /** The way `message` takes; a response ends its request's route. */
  take(message: JsonRpcMessage, relatedRequestId: RequestId | undefined): StreamRoute {
    const response = isJsonRpcResponse(message);
    const related = relatedRequestId ?? this.impliedRelation(message);
    if (this.routed.size > 0) {
      // As the transport routes them: a response by its id, anything else by the request it relates to.
      const id = response ? message.id : related;
      const stream = id === undefined || id === null ? undefined : this.routed.get(id);
      if (stream) {
        if (response) this.routed.delete(id as RequestId);
        return { stream };
      }
    }
    if (response && message.id !== null) this.passedOn.delete(message.id);
    return { relatedRequestId: related };
  }

  /**
   * The client request a server-to-client request sent without a relation belongs to, when that can only be one: the
   * SDK's `ctx.mcpReq.elicitInput` and `requestSampling` send none, so on Streamable HTTP their question would go to
   * the stream a client opens with GET, which a client may open late (the question is then lost and the tool waits
   * until its timeout) or never. Messages sent while answering a request should relate to it (the transport spec), so
   * when the SDK server is answering exactly one request of this session, the question goes on that request's stream.
   * With several in flight it stays unrelated, as the SDK sent it. Only on this runtime's own HTTP sessions, whose
   * request streams are always SSE (a JSON-mode transport has nowhere to put a related request).
   */
  private impliedRelation(message: JsonRpcMessage): RequestId | undefined {
    if (!this.impliesRelations || !isJsonRpcRequest(message)) return undefined;
    if (this.routed.size + this.passedOn.size !== 1) return undefined;
    for (const id of this.routed.keys()) return id;
    for (const id of this.passedOn) return id;
    return undefined;
  }
}
