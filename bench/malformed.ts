// npm run bench:malformed — floods the fixture server (stdio) with malformed messages: every one must be answered
// with the right JSON-RPC error, the process must stay up, and its memory must stay flat.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { fmt } from './measure.js';

const ROUNDS = 5;
const PER_ROUND = 4000;

/** Malformed inputs and the error code each must get. */
const CASES: Array<[string, number, (i: number) => string]> = [
  ['not JSON', -32700, (i) => `{"jsonrpc":"2.0","id":${i},`],
  ['wrong jsonrpc version', -32600, (i) => JSON.stringify({ jsonrpc: '1.0', id: i, method: 'tasks/get' })],
  ['method not a string', -32600, (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 42 })],
  ['params not an object', -32602, (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/get', params: [1] })],
  ['taskId missing', -32602, (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/get', params: {} })],
  [
    'unknown task',
    -32602,
    (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/result', params: { taskId: `nope-${i}` } }),
  ],
  [
    'bad cursor',
    -32602,
    (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/list', params: { cursor: `x${i}` } }),
  ],
  [
    'bad task param',
    -32602,
    (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'slow_compute', arguments: {}, task: 'soon' },
      }),
  ],
];

const server = spawn(
  process.execPath,
  [fileURLToPath(new URL('../examples/conformance/server.js', import.meta.url)), '--stdio'],
  {
    env: { ...process.env, MCP_TASKS_STORE: 'memory', MCP_TASKS_RATE_LIMIT: '1000000:1000000' },
    stdio: ['pipe', 'pipe', 'inherit'],
  },
);
const answers = new Map<number | null, number>();
let nullAnswers = 0;
let buffer = '';
server.stdout.on('data', (chunk: Buffer) => {
  buffer += chunk.toString();
  let newline: number;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    const message = JSON.parse(line) as { id?: number | null; error?: { code: number } };
    if (message.id === null) nullAnswers++;
    else if (message.id !== undefined && message.error) answers.set(message.id, message.error.code);
  }
});
const send = (line: string) =>
  new Promise<void>((resolve) => (server.stdin.write(`${line}\n`) ? resolve() : server.stdin.once('drain', resolve)));
const rss = async (): Promise<number> => {
  const { execSync } = await import('node:child_process');
  return Number(execSync(`ps -o rss= -p ${server.pid}`).toString().trim()) / 1024;
};

await send(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  }),
);
await new Promise((resolve) => setTimeout(resolve, 500));
const rssSamples: number[] = [await rss()];
let id = 1;
let expectedNull = 0;
const expected = new Map<number, number>();
for (let round = 0; round < ROUNDS; round++) {
  for (let n = 0; n < PER_ROUND; n++) {
    const [, code, make] = CASES[n % CASES.length] as (typeof CASES)[number];
    const current = id++;
    if (code === -32700) expectedNull++;
    else expected.set(current, code);
    await send(make(current));
  }
  while (answers.size + nullAnswers < expected.size + expectedNull)
    await new Promise((resolve) => setTimeout(resolve, 20));
  if (global.gc) global.gc();
  rssSamples.push(await rss());
}
let wrong = 0;
for (const [key, code] of expected) if (answers.get(key) !== code) wrong++;
const alive = server.exitCode === null;
server.kill('SIGTERM');

const total = expected.size + expectedNull;
console.log(`malformed messages sent: ${fmt(total)} (${CASES.map(([name]) => name).join(', ')})`);
console.log(
  `answered with the right code: ${fmt(total - wrong - (expectedNull - nullAnswers))}/${fmt(total)}  (ratio ${fmt((total - wrong) / total, 4)})`,
);
console.log(`process alive afterwards: ${alive}`);
console.log(`server RSS by round (MiB): ${rssSamples.map((v) => fmt(v, 1)).join(' → ')}`);
const growth = (rssSamples.at(-1) as number) / (rssSamples[1] as number);
console.log(`RSS last round / first round: ${fmt(growth, 2)} (flat ≈ 1.00)`);
