export * from './deliverInputs.js';
export * from './DialectAnswer.js';
export * from './DialectContext.js';
export * from './inputRequestId.js';
export * from './listPage.js';
export * from './ownedBy.js';
export * from './RequestCancelled.js';
export * from './requireTaskId.js';
