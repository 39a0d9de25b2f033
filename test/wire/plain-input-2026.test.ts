import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { HttpFixture, ModernPeer, type Response } from '../helpers/rawWire.js';

/**
 * Tools written in the request style (`elicitInput`, `requestSampling`) called plainly on the 2026-07-28 wire by a
 * client that does not declare the tasks extension: each question comes back as an `input_required` result and the
 * retry carrying `inputResponses` + `requestState` continues the same run of the tool.
 */
type InputRequired = {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState: string;
};

function inputRequired(response: Response): InputRequired {
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  const result = response.result as InputRequired;
  expect(result.resultType).toBe('input_required');
  return result;
}

function onlyKey(round: InputRequired): string {
  const keys = Object.keys(round.inputRequests);
  expect(keys).toHaveLength(1);
  return keys[0] as string;
}

describe('request-style tools on a plain 2026-07-28 call (no tasks extension)', () => {
  let fixture: HttpFixture;
  let peer: ModernPeer;

  const call = (name: string, args: Record<string, unknown>, retry: Record<string, unknown> = {}) =>
    peer.request('tools/call', { name, arguments: args, ...retry }, { declare: false });

  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: 'token-a:alice,token-b:bob' } });
    peer = new ModernPeer(fixture.url);
    peer.capabilities = { elicitation: { form: {} }, sampling: {} };
  });
  afterAll(async () => fixture.close());

  it('asks an elicitation as input_required, then finishes with the accepted answer', async () => {
    const round = inputRequired(await call('confirm_delete', { filename: 'report.txt' }));
    const key = onlyKey(round);
    expect(round.inputRequests[key]).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Delete report.txt?' },
    });
    // The request state is an opaque, unguessable token.
    expect(round.requestState).toMatch(/^[\w-]{40,}$/);
    const done = await call(
      'confirm_delete',
      { filename: 'report.txt' },
      { inputResponses: { [key]: { action: 'accept', content: { confirm: true } } }, requestState: round.requestState },
    );
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'Deleted report.txt' }], resultType: 'complete' });
  });

  it('hands a declined answer to the tool as declined', async () => {
    const round = inputRequired(await call('confirm_delete', { filename: 'keep.txt' }));
    const done = await call(
      'confirm_delete',
      { filename: 'keep.txt' },
      { inputResponses: { [onlyKey(round)]: { action: 'decline' } }, requestState: round.requestState },
    );
    expect(done.result?.['content']).toEqual([{ type: 'text', text: 'Kept keep.txt (decline)' }]);
  });

  it('asks two questions in a row, each in its own round with a new key and state; a used state is spent', async () => {
    const args = { filename: 'a.txt' };
    const first = inputRequired(await call('rename_file', args));
    const firstKey = onlyKey(first);
    expect(first.inputRequests[firstKey]?.params['message']).toBe('New name for a.txt?');
    const answerName = { inputResponses: { [firstKey]: { action: 'accept', content: { name: 'b.txt' } } } };
    const second = inputRequired(await call('rename_file', args, { ...answerName, requestState: first.requestState }));
    const secondKey = onlyKey(second);
    expect(secondKey).not.toBe(firstKey);
    expect(second.requestState).not.toBe(first.requestState);
    expect(second.inputRequests[secondKey]?.params['message']).toBe('Rename a.txt to b.txt?');

    // Replaying the first round is refused: the run already moved on.
    const replay = await call('rename_file', args, { ...answerName, requestState: first.requestState });
    expect(replay.error?.code).toBe(-32602);

    const done = await call('rename_file', args, {
      inputResponses: { [secondKey]: { action: 'accept', content: { confirm: true } } },
      requestState: second.requestState,
    });
    expect(done.result?.['content']).toEqual([{ type: 'text', text: 'Renamed a.txt to b.txt' }]);
  });

  it('asks questions a tool asks together in one round; a partial answer leaves the rest outstanding', async () => {
    const round = inputRequired(await call('multi_input', {}));
    const keys = Object.keys(round.inputRequests);
    expect(keys).toHaveLength(2);
    const keyAsking = (message: string) =>
      keys.find((key) => round.inputRequests[key]?.params['message'] === message) as string;
    const nameKey = keyAsking('Your name?');
    const confirmKey = keyAsking('Proceed with the import?');
    const partial = inputRequired(
      await call(
        'multi_input',
        {},
        {
          inputResponses: { [confirmKey]: { action: 'accept', content: { confirm: true } } },
          requestState: round.requestState,
        },
      ),
    );
    expect(Object.keys(partial.inputRequests)).toEqual([nameKey]);
    const done = await call(
      'multi_input',
      {},
      {
        inputResponses: { [nameKey]: { action: 'accept', content: { name: 'Ada' } } },
        requestState: partial.requestState,
      },
    );
    expect(done.result?.['content']).toEqual([{ type: 'text', text: 'name="Ada" confirm=true' }]);
  });

  it('asks a sampling request the same way', async () => {
    const round = inputRequired(await call('test_sampling', { prompt: 'What is 6 x 7?' }));
    const key = onlyKey(round);
    expect(round.inputRequests[key]).toMatchObject({
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: 'What is 6 x 7?' } }] },
    });
    const done = await call(
      'test_sampling',
      { prompt: 'What is 6 x 7?' },
      {
        inputResponses: {
          [key]: {
            role: 'assistant',
            content: { type: 'text', text: '42' },
            model: 'test-model',
            stopReason: 'endTurn',
          },
        },
        requestState: round.requestState,
      },
    );
    expect(done.result?.['content']).toEqual([{ type: 'text', text: 'LLM response: 42' }]);
  });

  it("relays the tool's progress with the caller's token on the call's own stream", async () => {
    const response = await fetch(fixture.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'test_tool_with_progress',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'progress-1',
        method: 'tools/call',
        params: {
          name: 'test_tool_with_progress',
          arguments: {},
          _meta: {
            progressToken: 'p-1',
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'progress-test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    });
    const messages = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown> & { params?: Record<string, unknown> });
    const progress = messages.filter((message) => message['method'] === 'notifications/progress');
    expect(progress.map((message) => [message.params?.['progressToken'], message.params?.['progress']])).toEqual([
      ['p-1', 0],
      ['p-1', 50],
      ['p-1', 100],
    ]);
    expect(messages.at(-1)).toMatchObject({
      id: 'progress-1',
      result: { content: [{ type: 'text', text: 'Progress test completed' }] },
    });
  });

  it('refuses a request state it never gave, and one given to another caller, as unknown', async () => {
    const forged = await call('confirm_delete', { filename: 'x' }, { requestState: 'A'.repeat(43) });
    expect(forged.error?.code).toBe(-32602);

    const alice = new ModernPeer(fixture.url, { authorization: 'Bearer token-a' });
    const bob = new ModernPeer(fixture.url, { authorization: 'Bearer token-b' });
    alice.capabilities = bob.capabilities = { elicitation: { form: {} } };
    const params = { name: 'confirm_delete', arguments: { filename: 'alice.txt' } };
    const round = inputRequired(await alice.request('tools/call', params, { declare: false }));
    const answer = { inputResponses: { [onlyKey(round)]: { action: 'accept', content: { confirm: true } } } };
    const stolen = await bob.request(
      'tools/call',
      { ...params, ...answer, requestState: round.requestState },
      { declare: false },
    );
    expect(stolen.error).toEqual(forged.error);
    // Alice's call is untouched by the attempt.
    const done = await alice.request(
      'tools/call',
      { ...params, ...answer, requestState: round.requestState },
      { declare: false },
    );
    expect(done.result?.['content']).toEqual([{ type: 'text', text: 'Deleted alice.txt' }]);
  });

  it('the official SDK v2 client in plain mode answers the rounds through its own handlers', async () => {
    const client = new Client({ name: 'sdk-v2-plain', version: '1.0.0' }, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      inputRequired: { autoFulfill: true },
    } as never);
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = String(request.params.message);
      asked.push(message);
      return message.startsWith('New name') ? { action: 'accept', content: { name: 'c.txt' } } : { action: 'decline' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
    try {
      const result = await client.callTool({ name: 'rename_file', arguments: { filename: 'a.txt' } });
      expect(result.content).toEqual([{ type: 'text', text: 'Kept a.txt (decline)' }]);
      expect(asked).toEqual(['New name for a.txt?', 'Rename a.txt to c.txt?']);
    } finally {
      await client.close();
    }
  });

  it("the project's own TaskClient in plain mode on the extension's wire", async () => {
    const client = await TaskClient.connect(
      { url: fixture.url },
      { dialect: 'ext-2026', elicitation: () => ({ action: 'accept', content: { confirm: true } }) },
    );
    try {
      const handle = await client.callTool('confirm_delete', { filename: 'plain.txt' }, { mode: 'plain' });
      expect(handle.isTask).toBe(false);
      expect(textOf(await handle.result())).toBe('Deleted plain.txt');
    } finally {
      await client.close();
    }
  });
});

describe('limits on calls waiting for answers', () => {
  let fixture: HttpFixture;
  let peer: ModernPeer;

  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_HELD_MAX: '1', MCP_TASKS_HELD_MS: '400' } });
    peer = new ModernPeer(fixture.url);
    peer.capabilities = { elicitation: { form: {} } };
  });
  afterAll(async () => fixture.close());

  it('refuses to hold more calls than allowed, and forgets a call nobody answers in time', async () => {
    const params = { name: 'confirm_delete', arguments: { filename: 'one.txt' } };
    const held = inputRequired(await peer.request('tools/call', params, { declare: false }));
    const refused = await peer.request(
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'two.txt' } },
      { declare: false },
    );
    expect(refused.error).toMatchObject({ code: -32600, data: { limit: 'held_calls' } });

    await new Promise((resolve) => setTimeout(resolve, 800));
    const late = await peer.request(
      'tools/call',
      { ...params, inputResponses: { [onlyKey(held)]: { action: 'accept' } }, requestState: held.requestState },
      { declare: false },
    );
    expect(late.error?.code).toBe(-32602);
    // The slot is free again.
    inputRequired(await peer.request('tools/call', params, { declare: false }));
  });
});
