// The other process of `npm run bench:sqlite-wake`: opens the same SQLite file and completes each task id it is sent,
// answering with the time the completion was committed.
import { TaskEngine } from '../src/engine/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';

const engine = new TaskEngine({
  store: new SqliteStore({ path: process.argv[2] as string }),
  sweepIntervalMs: 0,
  recoveryIntervalMs: 0,
});
await engine.start();
let churn: NodeJS.Timeout | undefined;
process.on('message', (message: { taskId?: string; churn?: string; stop?: boolean }) => {
  if (message.taskId) {
    const taskId = message.taskId;
    void engine.complete(taskId, { kind: 'result', result: { content: [] } }).then(() => {
      process.send?.({ taskId, committedAt: performance.timeOrigin + performance.now() });
    });
  }
  // Changes one task every `POLL_MS` until told to stop: the other process's ticks then find a change each time.
  if (message.churn) {
    let n = 0;
    const taskId = message.churn;
    churn = setInterval(() => void engine.setStatusMessage(taskId, `step ${n++}`), 20);
  }
  if (message.stop) clearInterval(churn);
});
process.send?.({ ready: true });
process.on('disconnect', () => void engine.close().finally(() => process.exit(0)));
