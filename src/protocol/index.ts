// The wire of the three task generations, shared by the server dialects and the client codecs.
export * from './core20251125.js';
export * from './errorCodes.js';
export * from './events.js';
export * from './ext2026.js';
export * from './generations.js';
export * from './progressMeta.js';
export * from './relatedTask.js';
export * from './requestUrl.js';
export * from './retention.js';
export * from './sep1686.js';
export * from './tasksStream.js';
export * from './wireObject.js';
export * from './wireStatus.js';
