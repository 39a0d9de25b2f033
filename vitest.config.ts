import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

const src = fileURLToPath(new URL('./src/', import.meta.url));

export default defineConfig({
  resolve: {
    // The package by its own name, as examples import it: the root and its subpaths (package.json `exports`,
    // tsconfig.json `paths`) from source.
    alias: [
      { find: /^mcp-tasks$/, replacement: `${src}index.ts` },
      { find: /^mcp-tasks\/(.+)$/, replacement: `${src}exports/$1.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // CI fails outright when a service's URL is missing, rather than skip its suites.
    globalSetup: ['test/setup/servicesInCi.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites spawn servers and databases; two cores in CI.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
