import { randomBytes } from 'node:crypto';

import { createRequestStateCodec } from '@modelcontextprotocol/server';

/**
 * Seals the `requestState` the multi-round-trip fixtures hand to the client (HMAC), so an echo that was tampered with
 * is refused with -32602 before a handler runs. The key is per process unless MCP_TASKS_REQUEST_STATE_KEY (at least
 * 32 bytes) is set: fixture servers that share a flow across processes need the same key.
 */
export const fixtureRequestState = createRequestStateCodec<Record<string, unknown>>({
  key: process.env['MCP_TASKS_REQUEST_STATE_KEY'] ?? randomBytes(32),
});
