/** A poll loop's sleep that a wake cuts short; a wake while awake makes the next sleep return at once. */
export class Waker {
  private cut: (() => void) | undefined;
  private pending = false;

  /** Poll now instead of waiting out the interval. */
  wake(): void {
    if (this.cut !== undefined) this.cut();
    else this.pending = true;
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.cut = () => {
        this.cut = undefined;
        done();
      };
    }).finally(() => {
      this.cut = undefined;
    });
  }
}
