export * from './CoreDialect.js';
export * from './coreCapabilities.js';
export * from './wireTask.js';
