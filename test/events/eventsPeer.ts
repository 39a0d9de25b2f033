import { ModernPeer, type Message } from '../helpers/rawWire.js';

export const EVENTS = 'io.modelcontextprotocol/events';
const TASKS = 'io.modelcontextprotocol/tasks';

/** A 2026-07-28 peer that declares the tasks and events extensions, and reads `events/stream` as it arrives. */
export function eventsPeer(url: string, headers: Record<string, string> = {}): ModernPeer {
  const peer = new ModernPeer(url, headers);
  peer.capabilities = { extensions: { [TASKS]: {}, [EVENTS]: {} } };
  return peer;
}

/** An open `events/stream`: every message as it arrives; `done` settles when the server ends the response. */
export interface OpenStream {
  status: number;
  contentType: string;
  messages: Message[];
  done: Promise<void>;
  /** The client aborts the request. */
  close(): void;
  /** Resolves with the first message `match` accepts. */
  next(match: (message: Message) => boolean, timeoutMs?: number): Promise<Message>;
}

let nextId = 1;

export async function openStream(
  url: string,
  params: Record<string, unknown>,
  options: { headers?: Record<string, string>; id?: string | number; method?: string } = {},
): Promise<OpenStream> {
  const requestMethod = options.method ?? 'events/stream';
  const controller = new AbortController();
  const id = options.id ?? `stream-${nextId++}`;
  const response = await fetch(url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': requestMethod,
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: requestMethod,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'events-test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS]: {} } },
        },
      },
    }),
  });
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  const contentType = response.headers.get('content-type') ?? '';
  const done = (async () => {
    if (!contentType.includes('text/event-stream')) {
      messages.push(JSON.parse(await response.text()) as Message);
      return;
    }
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (data) messages.push(JSON.parse(data) as Message);
          for (const wake of [...waiters]) wake();
        }
      }
    } catch {
      // aborted by close()
    }
  })().finally(() => {
    for (const wake of [...waiters]) wake();
  });
  let ended = false;
  void done.then(() => (ended = true));
  return {
    status: response.status,
    contentType,
    messages,
    done,
    close: () => controller.abort(),
    async next(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(match);
        if (found) return found;
        if (ended) throw new Error(`stream ended without the message: ${JSON.stringify(messages)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no such message in time: ${JSON.stringify(messages)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          const wake = () => {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
        });
      }
    },
  };
}

export const method = (name: string) => (message: Message) => message.method === name;
