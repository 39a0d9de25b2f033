import { describe, expect, it } from 'vitest';

import { ProgressRouter } from '../../src/client/ProgressRouter.js';
import type { TaskProgress } from '../../src/client/index.js';

function collector(): { reportProgress(progress: TaskProgress): void; seen: TaskProgress[] } {
  const seen: TaskProgress[] = [];
  return { seen, reportProgress: (progress) => seen.push(progress) };
}

describe('ProgressRouter', () => {
  it('keeps the latest report that arrives before the handle exists and hands it over on bind', () => {
    const router = new ProgressRouter();
    const token = router.open();
    expect(router.route({ progressToken: token, progress: 1, total: 4 })).toBe(true);
    expect(router.route({ progressToken: token, progress: 2, total: 4, message: 'half' })).toBe(true);
    const handle = collector();
    router.bind(token, handle);
    expect(handle.seen).toEqual([{ progress: 2, total: 4, message: 'half' }]);
    router.route({ progressToken: token, progress: 3 });
    expect(handle.seen.at(-1)).toEqual({ progress: 3 });
  });

  it("takes a late report for a released token of its own, and leaves everyone else's to the SDK", () => {
    const router = new ProgressRouter();
    const token = router.open();
    const handle = collector();
    router.bind(token, handle);
    router.releaseTarget(handle);
    expect(router.size).toBe(0);
    expect(router.route({ progressToken: token, progress: 5 })).toBe(true);
    expect(handle.seen).toEqual([]);
    expect(router.route({ progressToken: 'sdk-7', progress: 5 })).toBe(false);
    expect(router.route({ progressToken: 7, progress: 5 })).toBe(false);
  });

  it('drops the route of a call that never started', () => {
    const router = new ProgressRouter();
    router.release(router.open());
    expect(router.size).toBe(0);
  });
});
