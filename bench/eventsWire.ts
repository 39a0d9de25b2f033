// The requestor side of `npm run bench:events` on the 2026-07-28 wire: one request and its result, and an open
// `events/stream` read as its frames arrive. Plain node:http, so ten thousand streams cost the bench little.
import { Agent, request as httpRequest, type ClientRequest } from 'node:http';

const TASKS = 'io.modelcontextprotocol/tasks';
const EVENTS = 'io.modelcontextprotocol/events';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench-events', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {}, [EVENTS]: {} } },
};
/** One connection per stream, none kept: a stream holds its socket until it ends. */
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

export interface Message {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

function post(url: string, method: string, params: Record<string, unknown>, token: string) {
  const id = nextId++;
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });
  const req = httpRequest(url, {
    method: 'POST',
    agent,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params['name'] === 'string' && { 'mcp-name': params['name'] }),
      authorization: `Bearer ${token}`,
    },
  });
  req.end(body);
  return { id, req };
}

/** Calls `onMessage` with each JSON-RPC message of the answer (a JSON body or SSE frames); resolves at its end. */
function readAnswer(req: ClientRequest, onMessage: (message: Message) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      const sse = (res.headers['content-type'] ?? '').includes('text/event-stream');
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        if (!sse) return;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (data) onMessage(JSON.parse(data) as Message);
        }
      });
      res.once('end', () => {
        if (!sse && buffer.trim()) onMessage(JSON.parse(buffer) as Message);
        resolve();
      });
      res.once('error', reject);
      res.once('close', resolve);
    });
  });
}

/** One request; its result, or throws its error. */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  token = 'bench',
): Promise<Record<string, unknown>> {
  const { id, req } = post(url, method, params, token);
  let answer: Message | undefined;
  await readAnswer(req, (message) => {
    if (message.id === id) answer = message;
  });
  if (!answer?.result) throw new Error(`${method}: ${JSON.stringify(answer?.error ?? 'no answer')}`);
  return answer.result;
}

/** An open `events/stream`: `active` resolves on its first frame; `onEvent` is told of each event as it arrives. */
export interface EventStream {
  active: Promise<void>;
  done: Promise<void>;
  close(): void;
}

/** Opens `events/stream` on the event source a task's CreateTaskResult named. */
export function openEventStream(
  url: string,
  source: { name: string; input: Record<string, unknown>; initialCursor: string },
  onEvent: (params: Record<string, unknown>) => void,
  token = 'bench',
): EventStream {
  const { req } = post(
    url,
    'events/stream',
    { name: source.name, arguments: source.input, cursor: source.initialCursor },
    token,
  );
  let activated: () => void = () => {};
  let refused: (error: Error) => void = () => {};
  const active = new Promise<void>((resolve, reject) => {
    activated = resolve;
    refused = reject;
  });
  const done = readAnswer(req, (message) => {
    if (message.method === 'notifications/events/active') activated();
    else if (message.method === 'notifications/events/event') onEvent(message.params ?? {});
    else if (message.error) refused(new Error(`events/stream: ${JSON.stringify(message.error)}`));
  }).finally(() => refused(new Error('events/stream ended before it was active')));
  done.catch(() => {});
  return { active, done, close: () => req.destroy() };
}
