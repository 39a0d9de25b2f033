/**
 * Ctrl-C handling while a command follows a task: the first SIGINT runs `first` (cancel, or stop following), the
 * second runs `second`. Returns the function that removes the handler.
 */
export function onInterrupt(first: () => void, second: () => void): () => void {
  let count = 0;
  const handler = () => {
    count++;
    if (count === 1) first();
    else second();
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}
