/** A console request refused with an HTTP status and a reason the page shows (`{ error }`). */
export class ConsoleRefusal extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}
