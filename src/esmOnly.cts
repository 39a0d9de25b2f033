// What `require('mcp-tasks')` loads (the `require` condition of every entry in package.json's exports): the package
// is ESM only, and without this entry a require() fails with ERR_PACKAGE_PATH_NOT_EXPORTED, which says nothing of why.
throw Object.assign(
  new Error(
    'mcp-tasks is ESM-only: load it with import, or with await import("mcp-tasks") from CommonJS. ' +
      'In your package.json set "type": "module" (or name your files .mjs/.mts); TypeScript projects also need ' +
      '"module": "nodenext" (what tsc --init writes).',
  ),
  { code: 'ERR_REQUIRE_ESM' },
);
