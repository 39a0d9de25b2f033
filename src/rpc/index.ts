export * from './ErrorCodes.js';
export * from './JsonRpc.js';
export * from './RpcError.js';
export * from './toJsonRpcError.js';
export * from './validateMessage.js';
