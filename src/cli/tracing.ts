/**
 * `node --import ./node_modules/mcp-tasks/dist/src/cli/tracing.js app.js`: tracing for any process (the demo, a custom server) from
 * the standard OpenTelemetry environment variables; `mcp-tasks` commands start it themselves.
 */
import { startTracing } from './tracingSetup.js';

await startTracing();
