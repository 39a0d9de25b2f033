import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { StdioPeer, eventually } from '../helpers/rawWire.js';

const MiB = 1024 * 1024;

describe('stdio framing (fixture server over a real pipe)', () => {
  let peer: StdioPeer;
  let stderr = '';

  beforeAll(async () => {
    peer = await StdioPeer.start({ stderr: 'pipe' });
    peer.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await peer.initialize();
  });
  afterAll(async () => peer.close());

  const alive = async () => expect((await peer.request('ping')).result).toEqual({});

  it('keeps multi-byte characters whole across read chunks (a 300 KB message)', async () => {
    const name = 'é€😀'.repeat(300_000 / 9);
    const response = await peer.request('tools/call', { name: 'greet', arguments: { name } });
    const content = response.result?.['content'] as Array<{ text: string }>;
    expect(content[0]?.text).toBe(`Hello, ${name}!`);
    expect(content[0]?.text).not.toContain('\uFFFD');
  });

  it('decodes a character whose bytes arrive in two separate writes', async () => {
    const bytes = Buffer.from(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'split', method: 'tools/call', params: { name: 'greet', arguments: { name: '😀' } } })}\n`,
    );
    const cut = bytes.indexOf(Buffer.from('😀')) + 2;
    const answer = new Promise<{ result?: { content: Array<{ text: string }> } }>((resolve) =>
      (peer as unknown as { pending: Map<string, (r: unknown) => void> }).pending.set('split', resolve as never),
    );
    peer.child.stdin?.write(bytes.subarray(0, cut));
    await new Promise((resolve) => setTimeout(resolve, 100));
    peer.child.stdin?.write(bytes.subarray(cut));
    expect((await answer).result?.content[0]?.text).toBe('Hello, 😀!');
  });

  it('refuses a line over the cap with -32600 and its id, logs it, and keeps the connection', async () => {
    const name = 'x'.repeat(5 * MiB);
    const response = await peer.request('tools/call', { name: 'greet', arguments: { name } }, { id: 'big' });
    expect(response.id).toBe('big');
    expect(response.error?.code).toBe(-32600);
    expect(response.error?.message).toContain(`limited to ${4 * MiB} bytes`);
    await eventually(() => stderr.includes('stdin line too long'));
    await alive();
  });

  it('answers an endless line at once, drops it without buffering, and reads on after its newline', async () => {
    const answer = peer.sendRaw('', null); // the id comes after nested members here, so it is answered with id null
    peer.child.stdin?.write('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"greet","arguments":{"name":"');
    const block = 'y'.repeat(MiB);
    // 12 MiB without a newline: more than the SDK's own 10 MiB buffer, which would close the connection.
    for (let i = 0; i < 12; i++) peer.child.stdin?.write(block);
    const refusal = await answer;
    expect(refusal?.error?.code).toBe(-32600);
    expect(refusal?.id).toBeNull();
    peer.child.stdin?.write('"}},"id":"late"}\n');
    await alive();
    expect(peer.alive).toBe(true);
  });
});
