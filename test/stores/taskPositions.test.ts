import { describe, expect, it } from 'vitest';

import { TaskPositions } from '../../src/stores/memory/TaskPositions.js';

const at = (createdAt: number, taskId: string) => ({ createdAt, taskId });
const ids = (positions: Iterable<{ taskId: string }>) => [...positions].map((p) => p.taskId);

describe('TaskPositions (the memory store’s list order)', () => {
  it('keeps positions newest first, ties by task id descending, whatever the order they came in', () => {
    const positions = new TaskPositions();
    for (const p of [at(2, 'b'), at(3, 'a'), at(2, 'c'), at(1, 'z'), at(3, 'b')]) positions.add(p);
    expect(ids(positions.after())).toEqual(['b', 'a', 'c', 'b', 'z']);
    expect([...positions.after()].map((p) => p.createdAt)).toEqual([3, 3, 2, 2, 1]);
    expect(positions.size).toBe(5);
  });

  it('resumes strictly after a cursor, also one whose task is gone', () => {
    const positions = new TaskPositions();
    for (let i = 0; i < 1000; i++) positions.add(at(i, `t${String(i).padStart(4, '0')}`));
    expect(ids(positions.after(at(500, 't0500'))).slice(0, 2)).toEqual(['t0499', 't0498']);
    positions.remove(at(500, 't0500'));
    positions.remove(at(499, 't0499'));
    expect(ids(positions.after(at(500, 't0500'))).slice(0, 2)).toEqual(['t0498', 't0497']);
    expect(positions.size).toBe(998);
    expect(ids(positions.after(at(0, 't0000')))).toEqual([]);
    expect(ids(new TaskPositions().after())).toEqual([]);
  });

  it('removes by value: the position passed need not be the object added', () => {
    const positions = new TaskPositions();
    const added = at(7, 'x');
    positions.add(added);
    added.createdAt = 8;
    positions.remove(at(7, 'x'));
    expect(positions.size).toBe(0);
  });
});
