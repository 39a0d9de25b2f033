import { expect, it } from 'vitest';

import { VerificationBudget } from '../../src/events/webhooks/VerificationBudget.js';

// spec V105: per host, per rolling minute, with a bounded number of hosts tracked.
it('allows a host so many verifications a minute, each host apart, and forgets the oldest hosts', () => {
  const budget = new VerificationBudget(2, 3);
  expect(budget.take('a.example', 0)).toBe(true);
  expect(budget.take('a.example', 10)).toBe(true);
  expect(budget.take('a.example', 20)).toBe(false);
  expect(budget.take('b.example', 20)).toBe(true);
  expect(budget.take('a.example', 60_000)).toBe(true); // the first one left the window
  expect(budget.take('a.example', 60_005)).toBe(false);
  // Tracking is bounded: after three more hosts, a.example is forgotten (a fresh budget).
  for (const host of ['c', 'd', 'e']) expect(budget.take(host, 60_006)).toBe(true);
  expect(budget.take('a.example', 60_007)).toBe(true);
});
