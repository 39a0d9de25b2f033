import { describe, it } from 'vitest';

/**
 * The URL of an external service an integration suite needs, from `envVar`. When it is missing, registers a
 * placeholder suite instead: failing in CI (`CI=true`, where the services must be running) and skipped elsewhere,
 * with the reason in its title. Callers register their suites only when a URL comes back.
 */
export function requireService(name: string, envVar: string): string | undefined {
  const url = process.env[envVar];
  if (url) return url;
  const hint = `start one with: eval "$(scripts/services.sh start)"`;
  if (process.env['CI'] === 'true') {
    describe(`${name} integration`, () => {
      it(`needs ${envVar}`, () => {
        throw new Error(`${envVar} is not set; CI must provide ${name} (${hint})`);
      });
    });
  } else {
    console.warn(`Skipping the ${name} integration tests: ${envVar} is not set; ${hint}`);
    describe.skip(`${name} integration (skipped: ${envVar} is not set; ${hint})`, () => {
      it(`needs ${name}`, () => {});
    });
  }
  return undefined;
}
