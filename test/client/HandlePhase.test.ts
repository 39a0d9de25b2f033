import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { TaskClient, TaskConnectionError, textOf } from '../../src/client/index.js';
import { nextPhase, type HandleEvent, type HandlePhase } from '../../src/client/HandlePhase.js';
import { WirePeer } from './helpers/WirePeer.js';

const PHASES: HandlePhase[] = ['idle', 'confirming', 'calling', 'polling', 'detached', 'settled'];
const follow = (kind: 'call' | 'task' | 'unconfirmed'): HandleEvent => ({ type: 'follow', kind });

describe('HandlePhase transitions', () => {
  it('starts following only from idle, as a call, a task or an unconfirmed SEP-1686 task', () => {
    expect(nextPhase('idle', follow('call'))).toBe('calling');
    expect(nextPhase('idle', follow('task'))).toBe('polling');
    expect(nextPhase('idle', follow('unconfirmed'))).toBe('confirming');
    // A second outcome() / updates() / cancel() does not start a second poll loop, and a detached handle stays so.
    for (const phase of PHASES.filter((p) => p !== 'idle')) {
      expect(nextPhase(phase, follow('task'))).toBe(phase);
    }
  });

  it('polls once the task is confirmed, and a late confirmation changes nothing elsewhere', () => {
    expect(nextPhase('confirming', { type: 'confirmed' })).toBe('polling');
    for (const phase of PHASES.filter((p) => p !== 'confirming')) {
      expect(nextPhase(phase, { type: 'confirmed' })).toBe(phase);
    }
  });

  it('detaches from every phase but settled, and settles from every phase; settled is final', () => {
    for (const phase of PHASES.filter((p) => p !== 'settled')) {
      expect(nextPhase(phase, { type: 'detach' })).toBe('detached');
      expect(nextPhase(phase, { type: 'settle' })).toBe('settled');
    }
    const events: HandleEvent[] = [follow('call'), follow('task'), { type: 'confirmed' }, { type: 'detach' }];
    for (const event of events) expect(nextPhase('settled', event)).toBe('settled');
  });
});

describe('a handle goes through its phases on the wire', () => {
  let peer: WirePeer;
  let client: TaskClient | undefined;

  beforeEach(async () => {
    peer = await WirePeer.start('ext-2026');
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await peer.close();
    expect(peer.violations).toEqual([]);
  });

  it('idle until asked for its outcome, then polling, then settled', async () => {
    client = await TaskClient.connect({ url: peer.url });
    const handle = await client.callTool('sleepy', { ms: 200, text: 'phased' }, { follow: false });
    expect(handle.phase).toBe('idle');
    expect(peer.requests('tasks/get')).toHaveLength(0);
    const outcome = handle.outcome();
    expect(handle.phase).toBe('polling');
    expect((await outcome).status).toBe('completed');
    expect(handle.phase).toBe('settled');
    expect(handle.isSettled).toBe(true);
  });

  it('a plain call is calling until its response settles it', async () => {
    client = await TaskClient.connect({ url: peer.url });
    const handle = await client.callTool('sleepy', { ms: 50 }, { mode: 'plain' });
    expect(['calling', 'settled']).toContain(handle.phase);
    expect(textOf(await handle.result())).toBe('plain sleepy');
    expect(handle.phase).toBe('settled');
    expect(handle.isTask).toBe(false);
  });

  it('a detached handle polls no more, is not followed again, and settles only when the client closes', async () => {
    client = await TaskClient.connect({ url: peer.url });
    const handle = await client.callTool('sleepy', { ms: 60_000 });
    expect(handle.phase).toBe('polling');
    handle.detach();
    expect(handle.phase).toBe('detached');
    const outcome = handle.outcome();
    expect(handle.phase).toBe('detached');
    await client.close();
    await expect(outcome).rejects.toBeInstanceOf(TaskConnectionError);
    expect(handle.phase).toBe('settled');
  });
});
