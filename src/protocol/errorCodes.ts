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
} as const;
