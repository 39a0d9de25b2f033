// The codes and the object test live in the wire module, shared with the client; rpc maps engine errors onto them.
export { ErrorCodes, isObject } from '../protocol/index.js';
export * from './JsonRpc.js';
export * from './OperationFailed.js';
export * from './RpcError.js';
export * from './TaskOperation.js';
export * from './toJsonRpcError.js';
export * from './validateMessage.js';
