import type { JsonRpcMessage, RequestId } from '../rpc/index.js';

/** Authentication info as the SDK transports hand it over (v1 and v2 share this shape). */
export interface AuthInfoLike {
  token?: string;
  clientId?: string;
  scopes?: string[];
  /** When the token expires, in seconds since the epoch. */
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/** What a transport passes along with an inbound message. */
export interface MessageExtraLike {
  authInfo?: AuthInfoLike;
  [key: string]: unknown;
}

/** The transport interface shared by the official SDK v1 and v2. */
export interface TransportLike {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: { relatedRequestId?: RequestId; [key: string]: unknown }): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JsonRpcMessage, extra?: MessageExtraLike) => void) | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
}

/** An MCP server instance built with the official SDK (v2 `McpServer`/`Server`, or v1 `McpServer`/`Server`). */
export interface ServerLike {
  // The SDKs type their own transport classes here; any of them satisfies TransportLike.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  connect(transport: any): Promise<void>;
  close(): Promise<void>;
}

export interface ServerFactoryContext {
  era: 'legacy' | 'modern';
  authInfo?: AuthInfoLike;
}

/** Builds a fresh instance of the author's server (tools registered). Called per connection and per task run. */
export type ServerFactory = (context: ServerFactoryContext) => ServerLike | Promise<ServerLike>;
