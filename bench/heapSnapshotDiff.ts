// node dist/bench/heapSnapshotDiff.js <before.heapsnapshot> <after.heapsnapshot> [count]
// What a heap grew by between two snapshots (v8.writeHeapSnapshot), by constructor: objects and their own bytes
// (closures by function name, strings and code together), largest first, and per item when `count` says how many
// items (streams, say) the growth is for. `npm run bench:events` with BENCH_EVENTS_SNAPSHOT=<dir> writes such a pair.
import { readFileSync } from 'node:fs';

import { fmt } from './measure.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

/** Objects and bytes by constructor (or kind, for what has none). */
function groups(path: string): Map<string, Group> {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byName = new Map<string, Group>();
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt] as number] as string;
    const name = heap.strings[heap.nodes[i + nameAt] as number] as string;
    const key =
      type === 'object' || type === 'native'
        ? name
        : type === 'closure'
          ? `${name || '(anonymous)'}()`
          : type === 'hidden' || type === 'array' || type === 'object shape'
            ? `${name} (${type})`
            : `(${type})`;
    const group = byName.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += heap.nodes[i + sizeAt] as number;
    byName.set(key, group);
  }
  return byName;
}

const [beforePath, afterPath, countArg] = process.argv.slice(2);
if (!beforePath || !afterPath) throw new Error('usage: heapSnapshotDiff <before> <after> [count]');
const count = Number(countArg ?? 1);
const before = groups(beforePath);
const after = groups(afterPath);
const rows = [...after].map(([name, group]) => {
  const was = before.get(name) ?? { count: 0, bytes: 0 };
  return { name, count: group.count - was.count, bytes: group.bytes - was.bytes };
});
rows.sort((a, b) => b.bytes - a.bytes);
const total = rows.reduce((sum, row) => sum + row.bytes, 0);
console.log(`grown by ${fmt(total / 1024 / 1024, 1)} MB of own bytes, ${fmt(total / count)} bytes per item (${count})`);
console.log(`${'constructor'.padEnd(60)} ${'objects/item'.padStart(12)} ${'bytes/item'.padStart(11)}`);
for (const row of rows.slice(0, 40))
  console.log(
    `${row.name.slice(0, 60).padEnd(60)} ${fmt(row.count / count, 2).padStart(12)} ${fmt(row.bytes / count).padStart(11)}`,
  );
