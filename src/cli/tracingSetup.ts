/**
 * Configures the OpenTelemetry Node SDK from the standard environment variables when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: OTLP over HTTP, `http/protobuf` (the default) or `http/json`
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`). The SDK packages are optional: the library itself only uses `@opentelemetry/api`,
 * which is a no-op until an SDK registers.
 */
let started: Promise<(() => Promise<void>) | undefined> | undefined;

const SDK_PACKAGES = '@opentelemetry/sdk-trace-node, @opentelemetry/resources and @opentelemetry/exporter-trace-otlp-';

async function start(env: NodeJS.ProcessEnv): Promise<(() => Promise<void>) | undefined> {
  if (!env['OTEL_EXPORTER_OTLP_ENDPOINT'] && !env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) return undefined;
  if (env['OTEL_SDK_DISABLED'] === 'true') return undefined;
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    process.stderr.write(
      `mcp-tasks: tracing off: OTLP protocol ${protocol} is not supported (http/json, http/protobuf)\n`,
    );
    return undefined;
  }
  try {
    const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
    const { detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
    const { OTLPTraceExporter } =
      protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    const resource = resourceFromAttributes({ 'service.name': 'mcp-tasks' }).merge(
      detectResources({ detectors: [envDetector] }),
    );
    const provider = new NodeTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    // The W3C trace-context propagator and the AsyncLocalStorage context manager.
    provider.register();
    const shutdown = () => provider.shutdown().catch(() => {});
    process.once('beforeExit', () => void shutdown());
    return shutdown;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const exporter = protocol === 'http/json' ? 'http' : 'proto';
    process.stderr.write(`mcp-tasks: tracing off: install ${SDK_PACKAGES}${exporter} to export traces\n`);
    return undefined;
  }
}

/** Starts tracing once per process (a no-op without the environment variables). */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<(() => Promise<void>) | undefined> {
  started ??= start(env);
  return started;
}

/** Exports the spans still buffered; called before the process exits on its own. */
export async function stopTracing(): Promise<void> {
  const shutdown = await started;
  await shutdown?.();
}
