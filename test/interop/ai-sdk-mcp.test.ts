import { execFile } from 'node:child_process';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { ROOT } from '../helpers/rawWire.js';
import { node22 } from './helpers/interopPeers.js';
import { recordedFixture } from './helpers/recordingProxy.js';

/** @ai-sdk/mcp needs Node 22: the binary the conformance tools install. */
const NODE22 = node22();
const PEER = join(ROOT, 'test/interop/peers/aiSdkCall.mjs');

interface PeerRun {
  asked: string[];
  result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean };
  error?: string;
}

function aiSdkCall(url: string, tool: string, args: unknown, answers: unknown[]): Promise<PeerRun> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE22,
      [PEER, url, tool, JSON.stringify(args), JSON.stringify(answers)],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => {
        const line = stdout.trim().split('\n').at(-1);
        if (!line) return reject(new Error(`the AI SDK peer printed nothing (${String(error)}): ${stderr}`));
        resolve(JSON.parse(line) as PeerRun);
      },
    );
  });
}

/**
 * A third-party 2026-07-28 client without the tasks extension, `@ai-sdk/mcp@2.0.99` (the AI SDK's MCP client), calls
 * request-style tools plainly: their elicitations reach its handler as `input_required` rounds and its retries
 * continue the same run. A recording proxy shows what it put on the wire.
 */
describe('interop: @ai-sdk/mcp 2.0.99 (2026-07-28, no tasks extension)', () => {
  const recorded = recordedFixture();

  it('answers confirm_delete through its elicitation handler, on the 2026-07-28 wire', async () => {
    const run = await aiSdkCall(recorded.proxy.url, 'confirm_delete', { filename: 'notes.txt' }, [
      { action: 'accept', content: { confirm: true } },
    ]);
    expect(run.error).toBeUndefined();
    expect(run.asked).toEqual(['Delete notes.txt?']);
    expect(run.result?.content).toEqual([{ type: 'text', text: 'Deleted notes.txt' }]);

    const calls = recorded.proxy.exchanges.filter((exchange) => exchange.message?.method === 'tools/call');
    expect(calls.length).toBe(2);
    for (const exchange of calls) {
      expect(exchange.headers['mcp-protocol-version']).toBe('2026-07-28');
      const capabilities = (exchange.message?.params?.['_meta'] as Record<string, { extensions?: object }>)[
        'io.modelcontextprotocol/clientCapabilities'
      ];
      expect(capabilities?.extensions ?? {}).not.toHaveProperty('io.modelcontextprotocol/tasks');
    }
    expect(calls[0]?.replies.at(-1)?.result?.['resultType']).toBe('input_required');
    expect(calls[1]?.message?.params?.['requestState']).toBe(calls[0]?.replies.at(-1)?.result?.['requestState']);
  });

  it('goes through two questions in a row, and passes a declined answer on', async () => {
    const renamed = await aiSdkCall(recorded.proxy.url, 'rename_file', { filename: 'a.txt' }, [
      { action: 'accept', content: { name: 'b.txt' } },
      { action: 'accept', content: { confirm: true } },
    ]);
    expect(renamed.asked).toEqual(['New name for a.txt?', 'Rename a.txt to b.txt?']);
    expect(renamed.result?.content).toEqual([{ type: 'text', text: 'Renamed a.txt to b.txt' }]);

    const declined = await aiSdkCall(recorded.proxy.url, 'confirm_delete', { filename: 'keep.txt' }, [
      { action: 'decline' },
    ]);
    expect(declined.result?.content).toEqual([{ type: 'text', text: 'Kept keep.txt (decline)' }]);
  });
});
