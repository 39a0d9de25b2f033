import { request as httpRequest } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * POSTs `size` bytes in 64 KiB chunks without a Content-Length (chunked), as fast as the socket takes them, and
 * resolves with the answer; a reset connection rejects.
 */
export function postChunked(url: string, size: number, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.setTimeout(10_000, () => request.destroy(new Error('no answer in time')));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}
