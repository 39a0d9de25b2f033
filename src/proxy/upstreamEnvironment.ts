import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';

/** Names an environment variable may have: letters, digits and `_`, not starting with a digit. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The environment of a stdio upstream: the SDK's safe subset (HOME, PATH, USER, …) plus the variables the operator
 * names, never the proxy's own (its console token, store URLs with passwords, cloud credentials). A named variable
 * that is not set is left out.
 */
export function upstreamEnvironment(
  names: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = getDefaultEnvironment();
  for (const name of names) {
    if (!NAME.test(name)) throw new Error(`"${name}" is not an environment variable name`);
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
