/**
 * JSON-RPC and MCP error codes used on the tasks wire, for server and client alike: the only place they are written
 * (the architecture test checks; the engine keeps its one internal-error code, which a test ties to this table).
 */
export const ErrorCodes = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A refusal by the HTTP transport (method, Origin, Host, media type, size), as the SDK's transports answer. */
  TRANSPORT_REFUSED: -32000,
  /** The `Mcp-Session-Id` names no open session. */
  SESSION_NOT_FOUND: -32001,
  /** MCP 2026-07-28: an `Mcp-Method` / `Mcp-Name` header disagrees with the body. */
  HEADER_MISMATCH: -32020,
  /** MCP 2026-07-28: the request needs a client capability it did not declare. */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** What early drafts of the tasks extension answered instead of -32021 (TASKS-SPEC A11). */
  DRAFT_MISSING_CAPABILITY: -32003,
  // The Events extension's codes (EVENTS-SPEC §9, spec V114): the drafts' -32011…-32015. SEP-3415 would renumber them
  // -32023…-32027; that is an edit of these five lines.
  /** Unknown event type, unknown webhook subscription, removed type; `data.kind` says which. */
  EVENTS_NOT_FOUND: -32011,
  /** The principal may not subscribe (or none is authenticated, for webhooks). */
  EVENTS_FORBIDDEN: -32012,
  /** A server limit or quota; `data.limit` names it, `data.max` its bound. */
  EVENTS_RESOURCE_EXHAUSTED: -32013,
  /** A delivery mode the type does not offer (`data.feature: "deliveryMode"`), or a schema changed in place. */
  EVENTS_UNSUPPORTED: -32014,
  /** A webhook endpoint failed verification or could not be reached; `data.reason` is the category. */
  EVENTS_CALLBACK_ENDPOINT_ERROR: -32015,
} as const;
