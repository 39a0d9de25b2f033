export * from './bearerChallenge.js';
export * from './jwtAuth.js';
export * from './ProtectedResource.js';
