/** A JSON-RPC error object as it travels on the wire. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A request from the upstream (elicitation, sampling) and the answer it gets. */
export type InputRequest = { method: string; params?: Record<string, unknown> };
export type InputAnswer = { result: Record<string, unknown> } | { error: RpcError };

/** A call in flight that can take the upstream's questions: a bridged task names its upstream task. */
export interface InputRoute {
  upstreamTaskId?: string;
  requestInput(request: InputRequest): Promise<InputAnswer>;
}
