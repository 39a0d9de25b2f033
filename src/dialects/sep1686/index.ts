export * from './SepDialect.js';
export * from './sepWire.js';
