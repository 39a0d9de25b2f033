import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually, startPeer, type RawPeer } from '../helpers/rawWire.js';

// Written by hand: serializing it in the test would overflow the stack just as it once did in the store.
const DEEP = `${'['.repeat(10_000)}0${']'.repeat(10_000)}`;
const MODERN_META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},' +
  '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}';

function deepCall(id: string, augmentation: string): string {
  return `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"label":"x","deep":${DEEP}}${augmentation}}}`;
}

function expectDepthRefusal(response: { error?: { code: number; message: string; data?: unknown } } | undefined) {
  expect(response?.error?.code).toBe(-32602);
  expect(response?.error?.message).toBe('Invalid params: Request params nested deeper than 64 levels');
  expect(response?.error?.data).toEqual({ limit: 'json_depth', maxDepth: 64 });
}

async function modernPost(url: string, body: string, name: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': JSON.parse(body.replace(DEEP, '0')).method,
      'mcp-name': name,
    },
    body,
  });
  const text = await response.text();
  const data = text.split('\n').find((line) => line.startsWith('data:'));
  return JSON.parse(data ? data.slice(5) : text) as Record<string, unknown>;
}

for (const kind of ['stdio', 'http'] as const) {
  describe(`deeply nested task params are -32602 (${kind})`, () => {
    let peer: RawPeer;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ peer, close } = await startPeer(kind));
      await peer.initialize();
    });
    afterAll(async () => close());

    it('2025-11-25 and SEP-1686 creations are refused, and the server goes on', async () => {
      expectDepthRefusal(await peer.sendRaw(deepCall('deep-core', ',"task":{}'), 'deep-core'));
      const sep = ',"_meta":{"modelcontextprotocol.io/task":{"taskId":"deep-sep"}}';
      expectDepthRefusal(await peer.sendRaw(deepCall('deep-sep', sep), 'deep-sep'));
      // 64 levels are fine.
      const fine = await peer.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0, label: 'ok', nested: JSON.parse(`${'['.repeat(60)}0${']'.repeat(60)}`) },
        task: {},
      });
      expect(fine.result?.['task']).toBeDefined();
      expect((await peer.request('ping')).result).toEqual({});
    });
  });
}

describe('deeply nested task params are -32602 (2026-07-28)', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await HttpFixture.start();
  });
  afterAll(async () => fixture.close());

  it('refuses the creation and a deep input answer alike', async () => {
    expectDepthRefusal(await modernPost(fixture.url, deepCall('deep-modern', `,${MODERN_META}`), 'slow_compute'));
    const peer = new ModernPeer(fixture.url);
    const created = await peer.request('tools/call', { name: 'confirm_delete', arguments: { filename: 'd' } });
    const taskId = (created.result as { taskId: string }).taskId;
    const waiting = await eventually(async () => {
      const task = (await peer.request('tasks/get', { taskId })).result;
      return task?.['status'] === 'input_required' ? task : undefined;
    });
    const [key] = Object.keys(waiting['inputRequests'] as object) as [string];
    const update = `{"jsonrpc":"2.0","id":"u","method":"tasks/update","params":{"taskId":"${taskId}","inputResponses":{"${key}":{"action":"accept","content":{"confirm":${DEEP}}}},${MODERN_META}}}`;
    const refused = (await modernPost(fixture.url, update, taskId)) as { error?: { code: number; message: string } };
    expect(refused.error?.code).toBe(-32602);
    expect(refused.error?.message).toBe('Invalid params: Input answer nested deeper than 64 levels');
    expect((await peer.request('tasks/get', { taskId })).result?.['status']).toBe('input_required');
    await peer.request('tasks/cancel', { taskId });
  });
});
