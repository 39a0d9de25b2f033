import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** A Streamable HTTP server. */
export interface HttpTarget {
  url: string | URL;
  /** Sent on every request (e.g. `Authorization`); never written to the handle store. */
  headers?: Record<string, string>;
  /** Resume this 2025-era session instead of opening a new one. */
  sessionId?: string;
  /** The protocol version of that session (sent as `MCP-Protocol-Version`). */
  protocolVersion?: string;
}

/** A server spawned as a child process speaking stdio. */
export interface StdioTarget {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** The child's stderr: inherited by default. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
}

export type TaskTarget = HttpTarget | StdioTarget;

/** What the handle store keeps of a target. */
export type TargetDescriptor = { kind: 'http'; url: string } | { kind: 'stdio'; command: string; args: string[] };

export function isHttpTarget(target: TaskTarget): target is HttpTarget {
  return 'url' in target;
}

export function describeTarget(target: TaskTarget): TargetDescriptor {
  return isHttpTarget(target)
    ? { kind: 'http', url: new URL(target.url).href }
    : { kind: 'stdio', command: target.command, args: [...(target.args ?? [])] };
}

/** A stable key for "the same server", used to match stored handles. */
export function targetKey(target: TaskTarget | TargetDescriptor): string {
  const descriptor = 'kind' in target ? target : describeTarget(target);
  return descriptor.kind === 'http'
    ? `http ${descriptor.url}`
    : `stdio ${JSON.stringify([descriptor.command, ...descriptor.args])}`;
}

export function createTransport(target: TaskTarget): Transport {
  if (isHttpTarget(target)) {
    return new StreamableHTTPClientTransport(new URL(target.url), {
      ...(target.headers !== undefined && { requestInit: { headers: target.headers } }),
      ...(target.sessionId !== undefined && { sessionId: target.sessionId }),
      ...(target.protocolVersion !== undefined && { protocolVersion: target.protocolVersion }),
    });
  }
  return new StdioClientTransport({
    command: target.command,
    ...(target.args !== undefined && { args: target.args }),
    ...(target.env !== undefined && { env: target.env }),
    ...(target.cwd !== undefined && { cwd: target.cwd }),
    ...(target.stderr !== undefined && { stderr: target.stderr }),
  });
}
