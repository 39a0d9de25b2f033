export * from './CoreDialect.js';
export * from './wireTask.js';
