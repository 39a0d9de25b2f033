#!/usr/bin/env node
import { readFileSync } from 'node:fs';

import { Command, CommanderError, Option } from 'commander';

import { MODERN_PROTOCOL_VERSION, TASK_GENERATIONS } from '../protocol/index.js';
import { normalizeJsonArguments, splitServerCommand } from './argv.js';
import { runCall, type CallOptions } from './commands/call.js';
import { runCancel } from './commands/cancel.js';
import {
  runEventsList,
  runEventsPoll,
  runEventsStream,
  type EventsPollOptions,
  type EventsTargetOptions,
} from './commands/events.js';
import { runEventsWebhook, type EventsWebhookOptions } from './commands/eventsWebhook.js';
import { runConsoleCommand, type ConsoleCommandOptions } from './commands/console.js';
import { runFollow } from './commands/follow.js';
import { runGet, type GetOptions } from './commands/get.js';
import { runList } from './commands/list.js';
import { runProxy, type ProxyCommandOptions } from './commands/proxy.js';
import { runServe, type ServeOptions } from './commands/serve.js';
import { runTools } from './commands/tools.js';
import { runWorkerCommand, type WorkerOptions } from './commands/worker.js';
import { defaultStorePath } from './connect.js';
import { EXIT_CODES, exitCodeForError, type ExitCode } from './exitCodes.js';
import type { GlobalOptions } from './GlobalOptions.js';
import { HumanReporter } from './HumanReporter.js';
import { JsonReporter } from './JsonReporter.js';
import { LineReader } from './LineReader.js';
import type { Reporter } from './Reporter.js';
import { visibleText } from './sanitize.js';
import { startTracing, stopTracing } from './tracingSetup.js';
import { UsageError } from './UsageError.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const EXIT_HELP = `
Exit codes:
  0  completed          1  failed             2  usage error
  3  connection error   4  cancelled          5  task not found
  6  not supported      130  interrupted (second Ctrl-C, or Ctrl-C in watch/result)

Target a server with --url <url> (Streamable HTTP) or -- <command...> (stdio).
Task ids created here are remembered (see --store), so get/result/watch/cancel
find their server and session again.`;

/** Builds the program; `run` receives each command's work and turns it into an exit code. */
function program(
  server: string[] | undefined,
  run: (work: (reporter: Reporter) => Promise<ExitCode>) => void,
): Command {
  const root = new Command('mcp-tasks')
    .description('Run MCP tools as tasks: call them, follow them, cancel them, resume them')
    .version(version())
    .option('--url <url>', 'Streamable HTTP endpoint of the server')
    .option(
      '-H, --header <name:value>',
      'HTTP header for every request (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .addOption(
      new Option('--dialect <dialect>', 'tasks generation to speak')
        .choices(['auto', ...TASK_GENERATIONS])
        .default('auto'),
    )
    .addOption(
      new Option('--protocol <era>', 'protocol negotiation when the dialect is auto').choices([
        'legacy',
        'auto',
        MODERN_PROTOCOL_VERSION,
      ]),
    )
    .option('--save-dialect', "keep --dialect as this server's default for later runs (--dialect auto forgets it)")
    .option('--store <path>', 'file that remembers task handles', defaultStorePath())
    .option('--no-store', 'do not remember task handles')
    .option('--json', 'one JSON object per line on stdout')
    .option('--ttl <ms>', 'retention to request for new tasks')
    .option('--no-input', 'decline elicitations instead of asking')
    .option('--verbose', "show the stdio server's stderr")
    .showHelpAfterError()
    .addHelpText('after', EXIT_HELP)
    .exitOverride();
  const globals = (command: Command) => command.optsWithGlobals<GlobalOptions>();
  // `--store` is also the root's handle store, and the root parses it wherever it appears; for `proxy` and `worker`,
  // which keep no handles, a `--store` on the command line is the task store.
  const taskStore = (own: string | undefined) =>
    own ?? (root.getOptionValueSource('store') === 'cli' ? (root.opts()['store'] as string | undefined) : undefined);

  root
    .command('serve')
    .description('run the demo task server')
    .option('--port <port>', 'port for Streamable HTTP (0 picks one)', '3000')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--stdio', 'serve over stdio instead of HTTP')
    .action((options: ServeOptions) => run((reporter) => runServe(options, reporter)));

  root
    .command('worker')
    .description('run queued tasks for server instances that use the queue executor (BullMQ on Redis)')
    .requiredOption('--module <path>', 'the server module: it exports the server factory the server instances use')
    .option('--export <name>', 'name of the factory export (else the default export)', 'createServer')
    .option(
      '--store <spec>',
      'the shared task store: postgres://…, redis://… or a SQLite path (default: $MCP_TASKS_STORE)',
    )
    .option('--redis <url>', 'Redis of the job queue (default: $REDIS_URL)')
    .option('--concurrency <n>', 'tasks run at once', '16')
    .option(
      '--max-running-per-owner <n>',
      "one owner's running tasks at most, across every worker of the queue (default: three quarters of their slots)",
    )
    .option(
      '--policies <name>',
      "export holding the tool policies, if any: a tool's `concurrency` holds across workers",
      'TASK_POLICIES',
    )
    .option('--queue <name>', 'queue name (default mcp-tasks)')
    .action((options: WorkerOptions) => {
      const store = taskStore(options.store);
      run((reporter) => runWorkerCommand({ ...options, ...(store !== undefined && { store }) }, reporter));
    });

  root
    .command('proxy')
    .description('durable tasks in front of any MCP server: -- <command...> (stdio) or --upstream <url>')
    .option('--upstream <url>', 'Streamable HTTP endpoint of the upstream server')
    .option(
      '--upstream-header <name:value>',
      'HTTP header for every upstream request (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option(
      '--upstream-env <name>',
      "environment variable a stdio upstream gets besides HOME, PATH, USER… (repeatable); the proxy's own are not passed",
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .addOption(
      new Option('--upstream-dialect <dialect>', 'tasks generation spoken to the upstream (sep-1686 must be named)')
        .choices(['auto', '2025-11-25', 'ext-2026', 'sep-1686'])
        .default('auto'),
    )
    .option('--port <port>', 'port for Streamable HTTP (0 picks one)', '3000')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--stdio', 'serve over stdio instead of HTTP')
    .option('--store <spec>', 'task store: a SQLite path, memory, postgres://…, redis://… (default ./mcp-tasks.db)')
    .option('--redis <url>', 'queue tasks on BullMQ in this Redis; every proxy on it runs queued tasks')
    .option('--queue <name>', 'queue name (default mcp-tasks)')
    .option('--tools <spec>', 'task support per tool: <glob>=<forbidden|optional|required>[,…]', '*=optional')
    .option('--config <file>', 'JSON: per-tool ttlMs, pollIntervalMs, retrySafe, timeoutMs, concurrency; limits')
    .option('--console', "serve the operator's console at /console (token: $MCP_TASKS_CONSOLE_TOKEN, else printed)")
    .option('--webhooks', "deliver the upstream's task events by webhook (events/subscribe), from the store's outbox")
    .option(
      '--webhook-allow-origin <origin>',
      'a callback origin allowed though loopback, private or http (repeatable; implies --webhooks)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .action((options: ProxyCommandOptions, command: Command) => {
      const store = taskStore(options.store);
      const verbose = globals(command).verbose === true;
      run((reporter) => runProxy({ ...options, ...(store !== undefined && { store }), verbose }, server, reporter));
    });

  root
    .command('console')
    .description("the operator's web console over a task store (token: $MCP_TASKS_CONSOLE_TOKEN, else generated)")
    .option(
      '--store <spec>',
      'task store: a SQLite path, postgres://…, redis://… (default: $MCP_TASKS_STORE, else ./mcp-tasks.db)',
    )
    .option('--port <port>', 'port (0 picks one)', '3001')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--path <path>', 'path of the console', '/console')
    .option('--allowed-hosts <names>', 'further Host names to answer to (comma-separated), e.g. behind a proxy')
    .action((options: ConsoleCommandOptions) => {
      const store = taskStore(options.store);
      run((reporter) => runConsoleCommand({ ...options, ...(store !== undefined && { store }) }, reporter));
    });

  root
    .command('call')
    .description('call a tool, as a task where the server allows it; Ctrl-C cancels it')
    .argument('<tool>', 'tool name')
    .argument('[arguments...]', 'tool arguments as key=value (values parsed as JSON when they parse)')
    .option('--args <json>', "tool arguments as one JSON object (also: --json '{...}')")
    .option('--detach', 'print the task id and exit, leaving the task running')
    .option('--no-validate', "send the arguments without checking them against the tool's input schema")
    .addOption(
      new Option('--mode <mode>', 'task: fail rather than run plainly; plain: never a task')
        .choices(['auto', 'task', 'plain'])
        .default('auto'),
    )
    .action((tool: string, pairs: string[], options: CallOptions, command: Command) =>
      run((reporter) => runCall(tool, pairs, options, globals(command), server, reporter)),
    );

  root
    .command('get')
    .description("show a task's current status")
    .argument('<id>', 'task id')
    .option('--timeline', "print the task's timeline, read from the task store (any owner's task)")
    .option('--task-store <spec>', 'task store for --timeline (default: $MCP_TASKS_STORE, else ./mcp-tasks.db)')
    .action((id: string, options: GetOptions, command: Command) =>
      run((reporter) => runGet(id, globals(command), server, reporter, options)),
    );

  root
    .command('result')
    .description('wait for a task to end and print its result')
    .argument('<id>', 'task id')
    .action((id: string, _options: unknown, command: Command) =>
      run((reporter) => runFollow(id, true, globals(command), server, reporter)),
    );

  root
    .command('watch')
    .description("follow a task's status until it ends")
    .argument('<id>', 'task id')
    .action((id: string, _options: unknown, command: Command) =>
      run((reporter) => runFollow(id, false, globals(command), server, reporter)),
    );

  root
    .command('cancel')
    .description("cancel a task and report the server's final word")
    .argument('<id>', 'task id')
    .action((id: string, _options: unknown, command: Command) =>
      run((reporter) => runCancel(id, globals(command), server, reporter)),
    );

  root
    .command('list')
    .description("list the server's tasks (stored handles where the server has no list)")
    .option('--cursor <cursor>', 'page to fetch')
    .action((options: { cursor?: string }, command: Command) =>
      run((reporter) => runList(options, globals(command), server, reporter)),
    );

  root
    .command('tools')
    .description("list the server's tools and their task support")
    .action((_options: unknown, command: Command) => run((reporter) => runTools(globals(command), server, reporter)));

  const events = root
    .command('events')
    .description("the server's events (the Events extension, 2026-07-28 wire): list types, poll, stream, webhooks");
  events
    .command('list')
    .description('list the event types, their delivery modes and descriptions')
    .option('--cursor <cursor>', 'page to fetch')
    .action((options: { cursor?: string }, command: Command) =>
      run((reporter) => runEventsList(options, globals(command), server, reporter)),
    );
  const target = (command: Command) =>
    command
      .argument('<type>', 'event type name')
      .argument('[arguments...]', "the type's arguments as key=value")
      .option('--task <id>', 'the task whose events to read (taskId=<id>)')
      .option('--args <json>', "the type's arguments as one JSON object")
      .option('--cursor <cursor>', 'start after this cursor (default: from now)');
  target(events.command('poll').description('poll once: the events after --cursor, and the cursor to send next'))
    .option('--max-events <n>', 'at most this many events')
    .option('--max-age-ms <ms>', 'skip events older than this')
    .action((name: string, pairs: string[], options: EventsPollOptions, command: Command) =>
      run((reporter) => runEventsPoll(name, pairs, options, globals(command), server, reporter)),
    );
  target(
    events.command('stream').description('print events as they come until the subscription ends (Ctrl-C stops)'),
  ).action((name: string, pairs: string[], options: EventsTargetOptions, command: Command) =>
    run((reporter) => runEventsStream(name, pairs, options, globals(command), server, reporter)),
  );
  target(
    events
      .command('webhook')
      .description('receive events by webhook on 127.0.0.1 (the server must allow that origin) until they end'),
  )
    .option('--port <port>', 'local port to receive on (0 picks one)', '0')
    .option('--ttl-ms <ms>', 'subscription lifetime to ask for (refreshed before it lapses)')
    .action((name: string, pairs: string[], options: EventsWebhookOptions, command: Command) =>
      run((reporter) => runEventsWebhook(name, pairs, options, globals(command), server, reporter)),
    );

  return root;
}

function reporterFor(options: Partial<GlobalOptions>): Reporter {
  const reader = new LineReader();
  const noInput = options.input === false;
  return options.json === true ? new JsonReporter(reader, { noInput }) : new HumanReporter(reader, { noInput });
}

async function main(argv: string[]): Promise<ExitCode> {
  let server: string[] | undefined;
  let cli: string[];
  try {
    ({ cli, server } = splitServerCommand(argv));
  } catch (error) {
    process.stderr.write(`mcp-tasks: ${visibleText((error as Error).message)}\n`);
    return EXIT_CODES.usage;
  }
  let work: ((reporter: Reporter) => Promise<ExitCode>) | undefined;
  const root = program(server, (action) => {
    work = action;
  });
  try {
    await root.parseAsync(normalizeJsonArguments(cli), { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version'
        ? EXIT_CODES.completed
        : EXIT_CODES.usage;
    }
    throw error;
  }
  if (work === undefined) {
    root.outputHelp();
    return EXIT_CODES.usage;
  }
  const reporter = reporterFor(root.opts<Partial<GlobalOptions>>());
  try {
    return await work(reporter);
  } catch (error) {
    reporter.error(error);
    return error instanceof UsageError ? EXIT_CODES.usage : exitCodeForError(error);
  } finally {
    reporter.close();
  }
}

// A closed pipe (`| head`) ends the output, not the command with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT_CODES.completed);
    throw error;
  });
}

startTracing()
  .then(() => main(process.argv.slice(2)))
  .then(async (code) => {
    await stopTracing();
    return code;
  })
  .then(
    (code) => {
      process.exitCode = code;
      // Anything still holding the event loop (a child server, a socket) must not keep a finished command alive.
      setTimeout(() => process.exit(code), 200).unref();
    },
    (error: unknown) => {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      process.stderr.write(`mcp-tasks: ${visibleText(text)}\n`);
      process.exit(EXIT_CODES.failed);
    },
  );
