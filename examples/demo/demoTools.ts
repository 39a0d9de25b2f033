import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';

import { McpServer, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import type { ToolTaskPolicy } from 'mcp-tasks';
import { emitTaskEvent } from 'mcp-tasks/workflow';
import { sleep } from '../shared/sleep.js';
import { FINDING, TEST_RESULTS } from './demoEvents.js';
import { MIGRATE_POLICY, registerMigrateRepositories } from './migrateRepositories.js';

/** Task policy per demo tool: what the runtime needs to know, declared next to the tools. */
export const DEMO_POLICIES: Record<string, ToolTaskPolicy> = {
  index_directory: { taskSupport: 'optional', pollIntervalMs: 500, retrySafe: true },
  research: { taskSupport: 'optional', pollIntervalMs: 1000 },
  run_test_suite: { taskSupport: 'required', pollIntervalMs: 1000, retrySafe: true, ttlMs: 6 * 60 * 60 * 1000 },
  migrate_repositories: MIGRATE_POLICY,
};

const HUMAN = { timeout: 24 * 60 * 60 * 1000 };

/**
 * Reports progress the MCP way: a `notifications/progress` under the request's token. A task run always has one (the
 * requestor's, or the runtime's own), so the task's statusMessage and progress follow on every wire.
 */
async function progress(ctx: ServerContext, done: number, total: number, message: string): Promise<void> {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token !== undefined)
    await ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken: token, progress: done, total, message },
    });
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Every regular file under `root`, skipping node_modules and dot-directories. */
async function listFiles(root: string, signal: AbortSignal): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    signal.throwIfAborted();
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  await walk(root);
  return files.sort();
}

function hashFile(path: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolveHash, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(path, { signal });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', reject);
    stream.on('end', () => resolveHash(hash.digest('hex')));
  });
}

/** Words that name several different things: the research tool asks which one is meant. */
const AMBIGUOUS: Record<string, string[]> = {
  mercury: ['the planet', 'the chemical element', 'the Roman god'],
  python: ['the programming language', 'the snake'],
  java: ['the programming language', 'the Indonesian island', 'coffee'],
  jaguar: ['the animal', 'the car maker'],
};

/**
 * The directory `path` names, resolved against `root` with symbolic links followed, or undefined when it is not
 * inside `root` (or does not exist): a client can index only what the operator exposed.
 */
async function insideRoot(root: string, path: string): Promise<string | undefined> {
  const [base, target] = await Promise.all([realpath(root), realpath(resolve(root, path)).catch(() => undefined)]);
  if (target === undefined) return undefined;
  return target === base || target.startsWith(base.endsWith(sep) ? base : base + sep) ? target : undefined;
}

export interface DemoToolsOptions {
  /** `index_directory` reads only under this directory. Default: the working directory. */
  root?: string;
}

/** What each research stage reports finding (the demo invents them). */
const FINDINGS: Array<(subject: string, depth: number) => string> = [
  (subject, depth) => `a plan of ${depth} lines of inquiry on ${subject}`,
  (subject, depth) => `${depth * 2} sources on ${subject} worth reading`,
  (subject) => `the sources on ${subject} agree on its main points`,
  (subject) => `a draft report on ${subject}`,
];

/** How the research tool words an unanswered question. */
const UNANSWERED: Record<'decline' | 'cancel', string> = { decline: 'declined', cancel: 'cancelled' };

/** The demo server: plain tool handlers written with the official SDK; mcp-tasks adds the tasks. */
export function createDemoServer(options: DemoToolsOptions = {}): McpServer {
  const indexRoot = resolve(options.root ?? process.cwd());
  const server = new McpServer({ name: 'mcp-tasks-demo', version: '0.1.0' });

  server.registerTool(
    'index_directory',
    {
      description:
        'Hashes every file under a directory (SHA-256) and returns a content digest of the tree. Cancellable, reports progress.',
      inputSchema: z.object({
        path: z.string().describe("Directory to index, relative to the server's root (or absolute, inside it)"),
        delayMs: z.number().min(0).max(5000).optional().describe('Pause per file, to watch progress'),
      }),
    },
    async ({ path, delayMs }, ctx) => {
      const root = await insideRoot(indexRoot, path);
      if (root === undefined)
        return { content: [{ type: 'text', text: `${path} is not a directory under ${indexRoot}` }], isError: true };
      if (!(await stat(root)).isDirectory())
        return { content: [{ type: 'text', text: `${root} is not a directory` }], isError: true };
      const signal = ctx.mcpReq.signal;
      const files = await listFiles(root, signal);
      const tree = createHash('sha256');
      let bytes = 0;
      for (const [index, file] of files.entries()) {
        const digest = await hashFile(file, signal);
        tree.update(`${relative(root, file)}\0${digest}\n`);
        bytes += (await stat(file)).size;
        // Paced (delayMs) every file is worth a report; at full speed, one in 25 is plenty.
        if (delayMs || index % 25 === 0 || index === files.length - 1)
          await progress(ctx, index + 1, files.length, `hashed ${index + 1}/${files.length} files`);
        if (delayMs) await sleep(delayMs, signal);
      }
      const digest = tree.digest('hex');
      return {
        content: [
          { type: 'text', text: `Indexed ${files.length} files (${bytes} bytes) under ${root}; tree digest ${digest}` },
        ],
        structuredContent: { root, files: files.length, bytes, digest },
      };
    },
  );

  server.registerTool(
    'research',
    {
      description:
        'A multi-stage research job (plan, gather, analyse, write). Asks a clarifying question when the topic is ambiguous.',
      inputSchema: z.object({ topic: z.string().min(1), depth: z.number().int().min(1).max(10).optional() }),
    },
    async ({ topic, depth = 3 }, ctx) => {
      let subject = topic;
      const meanings = AMBIGUOUS[topic.trim().toLowerCase()];
      if (meanings) {
        const answer = await ctx.mcpReq.elicitInput(
          {
            message: `"${topic}" can mean several things. Which one should the research cover?`,
            requestedSchema: {
              type: 'object',
              properties: { meaning: { type: 'string', enum: meanings } },
              required: ['meaning'],
            },
          },
          HUMAN,
        );
        if (answer.action !== 'accept')
          return {
            content: [
              { type: 'text', text: `Research on "${topic}" stopped: the question was ${UNANSWERED[answer.action]}.` },
            ],
            isError: true,
          };
        subject = `${topic} (${String(answer.content?.['meaning'])})`;
      }
      const stages = ['planning', 'gathering sources', 'analysing', 'writing the report'];
      for (const [index, stage] of stages.entries()) {
        await progress(ctx, index, stages.length, `${stage}: ${subject}`);
        await sleep(depth * 400, ctx.mcpReq.signal);
        // An intermediate result a requestor sees as it comes (run as a task; a plain call stores nothing).
        await emitTaskEvent(ctx, FINDING, {
          stage,
          finding: FINDINGS[index % FINDINGS.length]!(subject, depth),
          sources: depth * (index + 1),
        });
      }
      return text(`Report on ${subject}: ${depth * 4} sources reviewed across ${stages.length} stages.`);
    },
  );

  server.registerTool(
    'run_test_suite',
    {
      description: 'Runs a (simulated) test suite of `count` tests. Long-running: only callable as a task.',
      inputSchema: z.object({
        suite: z.string(),
        count: z.number().int().min(1).max(10_000),
        failing: z.number().int().min(0).optional(),
      }),
    },
    async ({ suite, count, failing = 0 }, ctx) => {
      // The last `failing` tests fail.
      const firstFailing = count - Math.min(failing, count) + 1;
      for (let test = 1; test <= count; test++) {
        await sleep(100, ctx.mcpReq.signal);
        if (test % 5 === 0 || test === count) {
          await progress(ctx, test, count, `${suite}: ${test}/${count} tests run`);
          const failed = Math.max(0, test - firstFailing + 1);
          await emitTaskEvent(ctx, TEST_RESULTS, { suite, run: test, of: count, passed: test - failed, failed });
        }
      }
      const passed = count - Math.min(failing, count);
      const summary = `${suite}: ${passed} passed, ${count - passed} failed`;
      return count - passed > 0 ? { content: [{ type: 'text', text: summary }], isError: true } : text(summary);
    },
  );

  server.registerTool(
    'word_count',
    { description: 'Counts the words of a text (quick, synchronous).', inputSchema: z.object({ text: z.string() }) },
    async ({ text: input }) => text(`${input.trim() === '' ? 0 : input.trim().split(/\s+/).length} words`),
  );
  registerMigrateRepositories(server);

  return server;
}
