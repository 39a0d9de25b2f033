import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { INTERNAL_ERROR_CODE } from '../src/engine/index.js';
import { ErrorCodes } from '../src/protocol/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The layer of a file: `engine`, `protocol`, `rpc`, `workflow`, `server`, `client`, `cli`, or `stores/x`, `executors/x`,
 * `dialects/x`.
 */
function layerOf(file: string): string {
  const parts = relative(src, file).split('/');
  const top = parts[0] as string;
  if (['stores', 'executors', 'dialects'].includes(top) && parts.length > 2) return `${top}/${parts[1]}`;
  return top;
}

const files = walk(src);
const imports = new Map<string, Array<{ spec: string; target?: string }>>();
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  imports.set(
    file,
    info.importedFiles.map(({ fileName: spec }) => {
      if (!spec.startsWith('.')) return { spec };
      return { spec, target: resolve(dirname(file), spec.replace(/\.js$/, '.ts')) };
    }),
  );
}

/** Which layers each layer may import (docs/architecture.md, "Layers and the dependency rule"), besides itself. */
function allowed(from: string, to: string): boolean {
  if (from === to) return true;
  const [fromTop] = from.split('/');
  const [toTop] = to.split('/');
  // The aggregate entry points (src/stores/index.ts, ...) re-export their sub-layers.
  if (['stores', 'executors', 'dialects'].includes(from) && toTop === from) return true;
  // The wire of the three generations is a leaf every layer above the engine may use; the engine stays wire-free.
  if (to === 'protocol') return fromTop !== 'engine';
  switch (fromTop) {
    case 'engine':
    case 'protocol':
      return false;
    case 'stores':
    case 'executors':
      return to === 'engine';
    case 'rpc':
      return to === 'engine';
    case 'dialects':
      return to === 'engine' || to === 'rpc' || to === 'dialects/shared';
    case 'workflow':
      // The step API for tool handlers: over the engine's journal, below the server that wires it in.
      return to === 'engine';
    case 'server':
      return ['engine', 'rpc', 'dialects', 'stores', 'executors', 'workflow', 'console', 'events'].includes(
        toTop as string,
      );
    case 'events':
      // The Events extension: one more claimer in the server's dialect list (the dialects' contract), serving each
      // task's event log from the engine; below the server that wires it in.
      return to === 'engine' || to === 'rpc' || to === 'dialects';
    case 'client':
      return to === 'rpc';
    case 'proxy':
      // The proxy: an SDK server in front (server runtime), the task client behind, engine types in between.
      return to === 'client' || to === 'server' || to === 'engine';
    case 'console':
      // The operator's view: engine reads and the engine's cancel, below the server that mounts it.
      return to === 'engine';
    case 'cli':
      // The package's binary: the client for the host commands, the server runtime for `serve` and `worker`, the
      // proxy for `proxy`, the console for `console` and `get --timeline`, the webhook verifier a host uses for
      // `events webhook`. Which of their names it may use is below ("the command line").
      return to === 'client' || to === 'server' || to === 'proxy' || to === 'console' || to === 'events';
    case 'index.ts':
    case 'exports':
      // The npm entry points (the root and src/exports/*) pick public names from the layers' entry points.
      return true;
    default:
      return false;
  }
}

const DATABASE_AND_QUEUE_CLIENTS = ['better-sqlite3', 'pg', 'ioredis', 'bullmq'];

/** The packages a layer may import at all; layers not listed may import any dependency. */
const PACKAGES_OF: Record<string, readonly string[]> = {
  // The wire's schemas are zod schemas; nothing else, so both ends can load it cheaply.
  protocol: ['zod'],
  // Pure mappings between the engine and the wire.
  rpc: [],
  dialects: [],
};

describe('the dependency rule (docs/architecture.md)', () => {
  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  for (const file of files) {
    const from = layerOf(file);
    it(`${relative(root, file)} imports only what its layer may`, () => {
      for (const { spec, target } of imports.get(file) ?? []) {
        if (!target) {
          if (DATABASE_AND_QUEUE_CLIENTS.includes(spec))
            expect(['stores', 'executors'], `${spec} outside stores/executors`).toContain(from.split('/')[0]);
          // The OpenTelemetry API is the one package the engine may use: a no-op until an application registers an SDK.
          if (from === 'engine')
            expect(spec.startsWith('node:') || spec === '@opentelemetry/api', `engine imports ${spec}`).toBe(true);
          if (spec.startsWith('@opentelemetry/') && spec !== '@opentelemetry/api')
            expect(relative(root, file), `${spec} is loaded only by the tracing setup`).toBe('src/cli/tracingSetup.ts');
          const packages = PACKAGES_OF[from.split('/')[0] as string];
          // Node built-ins are not packages, except for the wire, which runs wherever an MCP peer does.
          if (packages && (from === 'protocol' || !spec.startsWith('node:')))
            expect(packages, `${from} imports ${spec}`).toContain(spec);
          continue;
        }
        const to = layerOf(target);
        expect(allowed(from, to), `${from} must not import ${to} (${spec})`).toBe(true);
        // Other layers are reached through their public entry point only.
        if (from !== to) expect(target.endsWith('/index.ts'), `${spec} is not a public entry point`).toBe(true);
      }
    });
  }

  it('spells the wire once: meta keys, the extension id, notifications and generation names live in src/protocol', () => {
    const spellings = [
      /['"](io\.modelcontextprotocol|modelcontextprotocol\.io)\/[\w-]+['"]/,
      /['"]notifications\/(tasks|subscriptions)[\w/]*['"]/,
      /['"](core-2025-11-25|ext-tasks)['"]/,
    ];
    const offenders = files
      .filter((file) => layerOf(file) !== 'protocol')
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => spellings.some((spelling) => spelling.test(line)))
          .map((line) => `${relative(src, file)}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it('has no circular imports', () => {
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const { target } of imports.get(file) ?? [])
        if (target && imports.has(target)) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});

/** Where a module is loaded on demand with `import()`, and why; `computed` when the specifier is not a literal. */
const DYNAMIC_IMPORTS: Record<string, { why: string; computed?: true }> = {
  'server/createStore.ts': { why: 'the store its spec names, so one backend loads' },
  'server/McpTasks.ts': { why: 'the metrics library, only when metrics are asked for' },
  'cli/commands/serve.ts': { why: 'the demo server, shipped beside the code (package.json files)', computed: true },
  'cli/commands/worker.ts': { why: "the user's module with the server factory", computed: true },
  'cli/tracingSetup.ts': { why: 'the OpenTelemetry SDK and its OTLP exporter, only when an endpoint is configured' },
  'server/http/serveHttp.ts': { why: 'the operator console, only when it is configured' },
  'server/openStandaloneConsole.ts': { why: 'the operator console, only for the `console` command' },
  'server/auth/jwtAuth.ts': { why: 'jose, on the first token: a server without JWT auth starts (and recovers) sooner' },
};

function dynamicImportsOf(file: string): Array<{ literal: boolean; line: number }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ literal: boolean; line: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      found.push({
        literal: node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0] as ts.Node),
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('loading on demand', () => {
  it('uses import() only where a backend (or a user module) is chosen, computed only for user modules', () => {
    const seen: Record<string, { computed?: true }> = {};
    for (const file of files) {
      const found = dynamicImportsOf(file);
      if (found.length === 0) continue;
      const name = relative(src, file);
      expect(DYNAMIC_IMPORTS[name], `import() in ${name}:${found[0]?.line}`).toBeDefined();
      const computed = found.find((call) => !call.literal);
      if (computed) expect(DYNAMIC_IMPORTS[name]?.computed, `computed import() in ${name}:${computed.line}`).toBe(true);
      seen[name] = computed ? { computed: true } : {};
    }
    // Every entry of the list is still needed (a stale exception is a hole in the rule).
    expect(Object.keys(seen).sort()).toEqual(Object.keys(DYNAMIC_IMPORTS).sort());
  });
});

describe('the examples', () => {
  const examples = walk(join(root, 'examples'));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };

  it('are found', () => {
    expect(examples.length).toBeGreaterThan(5);
  });

  for (const file of examples) {
    it(`${relative(root, file)} imports the package by its name (a public entry point), not its source`, () => {
      for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (spec === 'mcp-tasks' || spec.startsWith('mcp-tasks/'))
          expect(Object.keys(pkg.exports), `${spec} is not in package.json exports`).toContain(
            spec === 'mcp-tasks' ? '.' : `./${spec.slice('mcp-tasks/'.length)}`,
          );
        else if (spec.startsWith('.'))
          expect(resolve(dirname(file), spec).startsWith(join(root, 'examples')), `${spec} leaves examples/`).toBe(
            true,
          );
      }
    });
  }
});

/** `-32xxx` written as a number in code (comments and strings aside): JSON-RPC error codes spelled out by hand. */
function errorCodeLiterals(file: string): string[] {
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    true,
    ts.LanguageVariant.Standard,
    readFileSync(file, 'utf8'),
  );
  const found: string[] = [];
  let minus = false;
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (minus && token === ts.SyntaxKind.NumericLiteral && /^32\d{3}$/.test(scanner.getTokenText()))
      found.push(`-${scanner.getTokenText()}`);
    minus = token === ts.SyntaxKind.MinusToken;
  }
  return found;
}

describe('error codes', () => {
  it('are written only in protocol/errorCodes.ts (and the engine’s one internal-error code, which equals it)', () => {
    const allowed = [join(src, 'protocol', 'errorCodes.ts'), join(src, 'engine', 'record', 'TaskRecord.ts')];
    const offenders = files
      .filter((file) => !allowed.includes(file))
      .flatMap((file) => errorCodeLiterals(file).map((code) => `${relative(root, file)}: ${code}`));
    expect(offenders).toEqual([]);
    expect(INTERNAL_ERROR_CODE).toBe(ErrorCodes.INTERNAL_ERROR);
  });
});

/** The names a file imports from our own modules (their declared names, not local aliases), with the module. */
function namedImportsOf(file: string): Array<{ name: string; target: string }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; target: string }> = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const spec = statement.moduleSpecifier.text;
    const bindings = statement.importClause?.namedBindings;
    if (!spec.startsWith('.') || !bindings || !ts.isNamedImports(bindings)) continue;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    for (const element of bindings.elements) found.push({ name: (element.propertyName ?? element.name).text, target });
  }
  return found;
}

/** Every name the npm entry points (src/index.ts, src/exports/) export, by its declared name. */
function publicNames(): Set<string> {
  const entries = [join(src, 'index.ts'), ...walk(join(src, 'exports'))];
  const names = new Set<string>();
  for (const entry of entries) {
    const source = ts.createSourceFile(entry, readFileSync(entry, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements)
      if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause))
        for (const element of statement.exportClause.elements) names.add((element.propertyName ?? element.name).text);
  }
  return names;
}

/**
 * What the command line takes that no npm entry exports, and why. The binary is more than a host: it ships the proxy
 * and the console as commands (they have no API of their own), and it opens a store from a spec as the runtime does.
 * Everything else it uses is public, so a host could build its commands from the package alone.
 */
const CLI_INTERNAL: Record<string, string> = {
  'proxy/': 'the proxy ships as the `proxy` command, not as an API',
  'console/': 'the console ships as the `console` command and a page of serveHttp, not as an API',
  'protocol/': "the wire's names and shapes, a leaf every layer may use",
  'server:createStore': 'a store from a spec string, as createMcpTasks opens it (`console`, `get --timeline`)',
  'server:DEFAULT_STORE': 'the store the demo server and `serve` use by default',
  'server:openStandaloneConsole':
    'the `console` command: a console over a store that publishes its cancels to webhooks',
  'server:FALLBACK_TOOL_NAMES': "`tools` marks the proxy's fallback tools",
  // Small checks a host writes in a line; the CLI takes the client's own so its answers match the client's.
  'client:isDialectPreference': 'checks `--dialect` against the generations the client knows',
  'client:isHttpTarget': 'reuses a remembered HTTP session only for an HTTP server',
  'client:targetKey': 'finds the session kept with the handles under the key the handle store uses',
};

describe('the command line', () => {
  const exported = publicNames();
  const cliFiles = files.filter((file) => layerOf(file) === 'cli');

  it('is found', () => {
    expect(cliFiles.length).toBeGreaterThan(5);
    expect(exported.has('TaskClient')).toBe(true);
  });

  it('uses only public names of the other layers, but for the listed exceptions', () => {
    const used = new Set<string>();
    const offenders: string[] = [];
    for (const file of cliFiles)
      for (const { name, target } of namedImportsOf(file)) {
        const layer = layerOf(target);
        if (layer === 'cli') continue;
        const exception = [`${layer}/`, `${layer}:${name}`].find((key) => key in CLI_INTERNAL);
        if (exception) used.add(exception);
        else if (!exported.has(name)) offenders.push(`${relative(src, file)}: ${name} from ${relative(src, target)}`);
      }
    expect(offenders).toEqual([]);
    // A stale exception is a hole in the rule.
    expect([...used].sort()).toEqual(Object.keys(CLI_INTERNAL).sort());
  });
});
