// The codes live in the wire module, shared with the client; rpc maps engine errors onto them.
export { ErrorCodes } from '../protocol/index.js';
