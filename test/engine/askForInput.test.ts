// A run waiting for its requestor's answer outlives store trouble: an outage while it waits, a reply lost after its
// question was stored, and a store that came back without the question.
import { afterEach, describe, expect, it } from 'vitest';

import type { TaskEngine, TaskRecord, TaskStore } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { startEngine } from '../helpers/engines.js';
import { eventually } from '../helpers/rawWire.js';
import { switchable } from '../helpers/switchableStore.js';

const request = { method: 'tools/call', params: { name: 'work', arguments: {} } };
const question = { method: 'elicitation/create', params: { message: 'Sure?', requestedSchema: { type: 'object' } } };
const yes = { result: { action: 'accept', content: { confirm: true } } };

describe('askForInput', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  async function started(memory: MemoryStore, store: TaskStore = memory) {
    const executor = {
      runnerId: 'runner-1',
      leasesOnCreate: true,
      submit: async (_task: TaskRecord) => {},
      close: async () => {},
    };
    const engine = await startEngine(store, { executor, recheckIntervalMs: 20 });
    engines.push(engine);
    const { taskId } = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
    await engine.markStarted(taskId, 'runner-1');
    return { engine, taskId };
  }

  const asked = async (memory: MemoryStore, taskId: string) =>
    Object.keys(((await memory.get(taskId)) as TaskRecord).inputRequests);

  it('waits out a store outage while it waits, and gets the answer given after it', async () => {
    const memory = new MemoryStore();
    const { store, setDown } = switchable(memory);
    const { engine, taskId } = await started(memory, store);
    const answer = engine.askForInput(taskId, question, 1, new AbortController().signal);
    await eventually(async () => (await asked(memory, taskId)).length === 1, 5000);

    // Down for several re-checks: each read of the wait fails.
    setDown(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    setDown(false);

    const [key] = await asked(memory, taskId);
    await engine.answerInput('o', taskId, { [key as string]: yes });
    expect(await answer).toEqual(yes);
    expect((await memory.get(taskId))?.status).toBe('working');
  });

  it('survives the connection lost on the first read of its wait, right after the question was stored', async () => {
    const memory = new MemoryStore();
    const { store, loseReadAfterWrite } = switchable(memory);
    const { engine, taskId } = await started(memory, store);
    // The read after the question's write fails as a dropped Redis connection does (not an error of ours).
    loseReadAfterWrite();
    const answer = engine.askForInput(taskId, question, 1, new AbortController().signal);
    await eventually(async () => (await asked(memory, taskId)).length === 1, 5000);
    const [key] = await asked(memory, taskId);
    await engine.answerInput('o', taskId, { [key as string]: yes });
    expect(await answer).toEqual(yes);
  });

  it('asks once when the store applied the question but its reply was lost', async () => {
    const memory = new MemoryStore();
    const { store, setDropReplies } = switchable(memory);
    const { engine, taskId } = await started(memory, store);
    setDropReplies(true);
    const answer = engine.askForInput(taskId, question, 1, new AbortController().signal);
    await eventually(async () => (await asked(memory, taskId)).length === 1, 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    setDropReplies(false);

    await new Promise((resolve) => setTimeout(resolve, 300));
    const keys = await asked(memory, taskId);
    expect(keys).toHaveLength(1);
    await engine.answerInput('o', taskId, { [keys[0] as string]: yes });
    expect(await answer).toEqual(yes);
  });

  it('asks again, with the same key, a question the store lost', async () => {
    const memory = new MemoryStore();
    const { engine, taskId } = await started(memory);
    const answer = engine.askForInput(taskId, question, 1, new AbortController().signal);
    await eventually(async () => (await asked(memory, taskId)).length === 1, 5000);
    const [key] = await asked(memory, taskId);
    const before = (await memory.get(taskId)) as TaskRecord;

    // The store comes back as it was before the question: working, no request, an older version.
    const lost: TaskRecord = { ...before, status: 'working', inputRequests: {}, version: before.version + 1 };
    expect(await memory.replace(lost, before.version)).toBe(true);
    await eventually(async () => (await memory.get(taskId))?.status === 'input_required', 5000);
    expect(await asked(memory, taskId)).toEqual([key]);

    await engine.answerInput('o', taskId, { [key as string]: yes });
    expect(await answer).toEqual(yes);
  });

  it('withdraws its question when the run is aborted', async () => {
    const memory = new MemoryStore();
    const { engine, taskId } = await started(memory);
    const abort = new AbortController();
    const answer = engine.askForInput(taskId, question, 1, abort.signal);
    await eventually(async () => (await asked(memory, taskId)).length === 1, 5000);
    abort.abort(new Error('stopped'));
    await expect(answer).rejects.toThrow('stopped');
    expect(await asked(memory, taskId)).toEqual([]);
  });
});
