/**
 * What a call in the removed `(tasks, factory, options)` shape gets, instead of a server that ignores its options: the
 * factory is the `server` given to createMcpTasks, or the `server` option.
 */
export function factoryArgumentError(name: string): TypeError {
  return new TypeError(
    `${name}(tasks, options): the second argument is the options object. The server factory is the \`server\` ` +
      `given to createMcpTasks, or the \`server\` option: ${name}(tasks, { server: factory, … })`,
  );
}
