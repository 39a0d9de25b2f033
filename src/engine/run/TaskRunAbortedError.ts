/** The reason a run stopped without reporting an outcome. */
export class TaskRunAbortedError extends Error {
  constructor(
    message: string,
    readonly handedBack = false,
  ) {
    super(message);
    this.name = 'TaskRunAbortedError';
  }
}
