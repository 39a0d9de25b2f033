export * from './DialectAnswer.js';
export * from './DialectContext.js';
export * from './inputRequestId.js';
export * from './requireTaskId.js';
