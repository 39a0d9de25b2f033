export * from './ErrorCodes.js';
export * from './JsonRpc.js';
export * from './OperationFailed.js';
export * from './RpcError.js';
export * from './TaskOperation.js';
export * from './toJsonRpcError.js';
export * from './validateMessage.js';
