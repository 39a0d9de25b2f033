import type { TaskEngine, TaskRecord } from '../../engine/index.js';
import { pushTaskChanges, type TaskPushView } from '../../dialects/index.js';
import type { JsonRpcNotification } from '../../rpc/index.js';

/** spec R42: the status push a connection sends for every task it created, until the task ends or it is stopped. */
export class TaskFollower {
  private readonly following = new Map<string, () => void>();

  constructor(
    private readonly host: { readonly engine: TaskEngine; readonly statusPush: TaskPushView },
    private readonly notify: (message: JsonRpcNotification) => void,
    /** Whether the requestor can hear notifications without a request now (they are not pushed meanwhile). */
    private readonly listening: () => boolean,
  ) {}

  follow(record: TaskRecord): void {
    const { taskId } = record;
    const push = this.host.statusPush;
    const stop = pushTaskChanges(
      this.host.engine,
      taskId,
      push,
      (method, params) => this.notify({ jsonrpc: '2.0', method, params }),
      { lastKey: push.key(record), onEnd: () => this.following.delete(taskId), listening: this.listening },
    );
    this.following.set(taskId, stop);
  }

  stopAll(): void {
    for (const stop of this.following.values()) stop();
    this.following.clear();
  }
}
