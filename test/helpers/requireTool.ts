import { describe, it } from 'vitest';

/**
 * Whether a program a suite drives is here. When it is not, registers a placeholder suite instead: failing in CI
 * (`CI=true`, where every suite must run) and skipped elsewhere, with the reason in its title, as requireService does
 * for the services. Callers register their suite only when this returns true.
 */
export function requireTool(name: string, present: boolean, hint: string): boolean {
  if (present) return true;
  if (process.env['CI'] === 'true') {
    describe(`${name} suites`, () => {
      it(`needs ${name}`, () => {
        throw new Error(`${name} is missing; CI must provide it (${hint})`);
      });
    });
  } else {
    describe.skip(`${name} suites (skipped: ${name} is missing; ${hint})`, () => {
      it(`needs ${name}`, () => {});
    });
  }
  return false;
}
