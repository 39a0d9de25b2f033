import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDemo as startDemoServer } from '../helpers/demoServer.js';
import { HttpPeer, ModernPeer, ROOT, eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

/** The demo server as `npm start` runs it, on a free port and a throwaway SQLite file. */
function startDemo() {
  return startDemoServer({ MCP_TASKS_STORE: join(tempDir(), 'demo.db'), MCP_TASKS_DEMO_ROOT: tmpdir() });
}

describe('the demo server (npm start)', () => {
  let demo: Awaited<ReturnType<typeof startDemo>>;
  let peer: HttpPeer;

  beforeAll(async () => {
    demo = await startDemo();
    peer = new HttpPeer(demo.url);
    await peer.initialize();
    await peer.openNotificationStream();
  });
  afterAll(async () => {
    await peer.close();
    demo.child.kill('SIGTERM');
  });

  it('prints its URL and a command to try it', () => {
    expect(demo.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(demo.banner).toMatch(
      /Try it: {2}node dist\/src\/cli\/main\.js --url http:\/\/127\.0\.0\.1:\d+\/mcp call index_directory/,
    );
  });

  it('index_directory hashes a real tree as a task, with progress, and the digest is reproducible', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    const files: Record<string, string> = { 'a.txt': 'alpha', 'b.txt': 'beta', 'sub/c.txt': 'gamma' };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const tree = createHash('sha256');
    for (const name of Object.keys(files).sort())
      tree.update(
        `${name}\0${createHash('sha256')
          .update(files[name] as string)
          .digest('hex')}\n`,
      );
    const created = await peer.request('tools/call', {
      name: 'index_directory',
      arguments: { path: dir },
      task: {},
      _meta: { progressToken: 'idx' },
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const result = await peer.request('tasks/result', { taskId });
    expect(result.result?.['structuredContent']).toEqual({
      root: dir,
      files: 3,
      bytes: 14,
      digest: tree.digest('hex'),
    });
    await eventually(() =>
      peer.notifications.some((n) => n.method === 'notifications/progress' && n.params?.['progressToken'] === 'idx'),
    );
  });

  it('index_directory reads only under the root it was given', async () => {
    const inside = tempDir();
    writeFileSync(join(inside, 'a.txt'), 'alpha');
    const relative = await peer.request('tools/call', {
      name: 'index_directory',
      arguments: { path: inside.slice(tmpdir().length + 1) },
    });
    expect(relative.result?.['structuredContent']).toMatchObject({ root: inside, files: 1 });
    // The checkout itself is outside the root, except when it was cloned under the temp directory (as CI may).
    const outsidePaths = ['/etc', '..', `${inside}/../..`];
    if (!ROOT.startsWith(`${tmpdir()}/`)) outsidePaths.unshift(ROOT);
    for (const path of outsidePaths) {
      const outside = await peer.request('tools/call', { name: 'index_directory', arguments: { path } });
      expect(outside.result?.['isError'], path).toBe(true);
      expect(JSON.stringify(outside.result?.['content']), path).toContain(`is not a directory under ${tmpdir()}`);
      expect(outside.result?.['structuredContent'], path).toBeUndefined();
    }
  });

  it('index_directory stops when its task is cancelled', async () => {
    const dir = tempDir();
    for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${i}.txt`), String(i));
    const created = await peer.request('tools/call', {
      name: 'index_directory',
      arguments: { path: dir, delayMs: 200 },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await peer.request('tasks/cancel', { taskId })).result?.['status']).toBe('cancelled');
    const before = (await peer.request('tasks/get', { taskId })).result?.['lastUpdatedAt'];
    await new Promise((resolve) => setTimeout(resolve, 600));
    const after = await peer.request('tasks/get', { taskId });
    expect(after.result?.['status']).toBe('cancelled');
    expect(after.result?.['lastUpdatedAt']).toBe(before);
  });

  it('research asks which meaning an ambiguous topic has, then finishes the report', async () => {
    peer.onServerRequest = (request) => {
      const schema = request.params?.['requestedSchema'] as { properties: { meaning: { enum: string[] } } };
      return { action: 'accept', content: { meaning: schema.properties.meaning.enum[1] } };
    };
    try {
      const created = await peer.request('tools/call', {
        name: 'research',
        arguments: { topic: 'mercury', depth: 1 },
        task: {},
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      await eventually(
        async () => (await peer.request('tasks/get', { taskId })).result?.['status'] === 'input_required',
      );
      const result = await peer.request('tasks/result', { taskId });
      expect(result.result?.['content']).toEqual([
        { type: 'text', text: 'Report on mercury (the chemical element): 4 sources reviewed across 4 stages.' },
      ]);
    } finally {
      peer.onServerRequest = undefined;
    }
  });

  for (const [action, word] of [
    ['decline', 'declined'],
    ['cancel', 'cancelled'],
  ] as const) {
    it(`research says so in plain words when its question is ${word}`, async () => {
      peer.onServerRequest = () => ({ action });
      try {
        const created = await peer.request('tools/call', {
          name: 'research',
          arguments: { topic: 'jaguar', depth: 1 },
          task: {},
        });
        const taskId = (created.result?.['task'] as { taskId: string }).taskId;
        const result = await peer.request('tasks/result', { taskId });
        expect(result.result?.['content']).toEqual([
          { type: 'text', text: `Research on "jaguar" stopped: the question was ${word}.` },
        ]);
        expect(result.result?.['isError']).toBe(true);
      } finally {
        peer.onServerRequest = undefined;
      }
    });
  }

  it('research called plainly on 2026-07-28 without the tasks extension asks through input_required', async () => {
    const modern = new ModernPeer(demo.url);
    modern.capabilities = { elicitation: { form: {} } };
    const params = { name: 'research', arguments: { topic: 'mercury', depth: 1 } };
    const asked = await modern.request('tools/call', params, { declare: false });
    const round = asked.result as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: { requestedSchema: unknown } }>;
      requestState: string;
    };
    expect(round.resultType).toBe('input_required');
    const [key, question] = Object.entries(round.inputRequests)[0] as [string, { method: string }];
    expect(question.method).toBe('elicitation/create');
    const answered = await modern.request(
      'tools/call',
      {
        ...params,
        inputResponses: { [key]: { action: 'accept', content: { meaning: 'the planet' } } },
        requestState: round.requestState,
      },
      { declare: false },
    );
    expect(answered.result?.['content']).toEqual([
      { type: 'text', text: 'Report on mercury (the planet): 4 sources reviewed across 4 stages.' },
    ]);

    const again = (await modern.request('tools/call', params, { declare: false })).result as typeof round;
    const declined = await modern.request(
      'tools/call',
      {
        ...params,
        inputResponses: { [Object.keys(again.inputRequests)[0] as string]: { action: 'decline' } },
        requestState: again.requestState,
      },
      { declare: false },
    );
    expect(declined.result?.['content']).toEqual([
      { type: 'text', text: 'Research on "mercury" stopped: the question was declined.' },
    ]);
  });

  it('run_test_suite only runs as a task; word_count answers at once', async () => {
    expect(
      (await peer.request('tools/call', { name: 'run_test_suite', arguments: { suite: 'unit', count: 3 } })).error
        ?.code,
    ).toBe(-32601);
    const created = await peer.request('tools/call', {
      name: 'run_test_suite',
      arguments: { suite: 'unit', count: 3, failing: 1 },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const result = await peer.request('tasks/result', { taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: 'unit: 2 passed, 1 failed' }]);
    expect((await peer.request('tasks/get', { taskId })).result?.['status']).toBe('failed');
    const words = await peer.request('tools/call', {
      name: 'word_count',
      arguments: { text: 'call now, fetch later' },
    });
    expect(words.result?.['content']).toEqual([{ type: 'text', text: '4 words' }]);
  });
});
