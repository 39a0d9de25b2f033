export * from './ExtDialect.js';
export * from './extWire.js';
