// Raw HTTP exchanges for comparing the answers of two Streamable HTTP servers byte for byte.
import { request as httpRequest } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, so the test controls every header; a stream is read until it ends (or `dropAfter` bytes). */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; dropAfterPriming?: boolean } = {},
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      const done = () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
      response.on('data', (chunk: string) => {
        body += chunk;
        if (options.dropAfterPriming && body.includes('\n\n')) {
          request.destroy();
          done();
        }
      });
      response.on('end', done);
    });
    request.setTimeout(10_000, () => request.destroy(new Error('no answer in time')));
    request.on('error', (error) => (options.dropAfterPriming ? undefined : reject(error)));
    request.end(options.body);
  });
}

export const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The same answer with what differs by nature between two servers (ids, times, session) made equal. */
export function normalized(answer: Answer) {
  const { date: _date, 'mcp-session-id': session, 'keep-alive': _keepAlive, ...headers } = answer.headers;
  return {
    status: answer.status,
    session: session !== undefined,
    headers,
    body: answer.body
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(:\d+)?/g, 'ID')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, 'TIME')
      .replace(/retry in \d+ ms/g, 'retry in N ms')
      .replace(/"retryAfterMs":\d+/g, '"retryAfterMs":N'),
  };
}

/** The JSON-RPC messages of an SSE or JSON body. */
export function messagesOf(answer: Answer): Array<Record<string, unknown>> {
  if (!String(answer.headers['content-type']).startsWith('text/event-stream'))
    return [JSON.parse(answer.body) as Record<string, unknown>];
  return answer.body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}
