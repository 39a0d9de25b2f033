import type { InputAnswer, InputRequest } from '../engine/index.js';

/** A JSON-RPC error object as it travels on the wire. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

// A request from the upstream (elicitation, sampling) and the answer it gets: the engine's shapes.
export type { InputAnswer, InputRequest };

/** A call in flight that can take the upstream's questions: a bridged task names its upstream task. */
export interface InputRoute {
  upstreamTaskId?: string;
  requestInput(request: InputRequest): Promise<InputAnswer>;
}
