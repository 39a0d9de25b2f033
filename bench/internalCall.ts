// The internal MCP call alone, as a worker makes it for each task: the CPU one call costs in this process, measured
// with `inFlight` calls at once on the fixture server, so bench:distributed can print its share of a worker's CPU a
// task. Everything around the call (claim, outcome write, queue) is left out.
import { TaskEngine, type TaskRecord, type TaskWorkContext } from '../src/engine/index.js';
import { createTaskWork } from '../src/server/index.js';
import { MemoryStore } from '../src/stores/index.js';
import { createFixtureServer } from '../examples/conformance/fixtureTools.js';

/** CPU (user + system) of one internal call of `slow_compute {seconds: 0}`, in ms. */
export async function internalCallCpu(options: { inFlight: number; warmupMs: number; measureMs: number }) {
  const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
  await engine.start();
  const { task } = await engine.create({
    owner: 'bench',
    dialect: 'bench',
    request: { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 } } },
    run: false,
  });
  await engine.close();
  const work = createTaskWork(createFixtureServer);
  const once = async () => {
    const outcome = await work(contextOf(task));
    if (typeof outcome !== 'object' || !('kind' in outcome) || outcome.kind !== 'result')
      throw new Error(`the internal call ended ${JSON.stringify(outcome)}`);
  };
  const loop = async (ms: number) => {
    let calls = 0;
    const until = performance.now() + ms;
    await Promise.all(
      Array.from({ length: options.inFlight }, async () => {
        while (performance.now() < until) {
          await once();
          calls++;
        }
      }),
    );
    return calls;
  };
  await loop(options.warmupMs);
  const before = process.cpuUsage();
  const calls = await loop(options.measureMs);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / calls;
}

/** What a run hands the work, with nothing stored: the call's own cost only. */
function contextOf(task: TaskRecord): TaskWorkContext {
  return {
    task,
    signal: new AbortController().signal,
    setStatusMessage: async () => {},
    reportProgress: async () => {},
    settleStatus: () => {},
    endsLater: () => {},
    requestInput: () => Promise.reject(new Error('the benchmark tool asks nothing')),
    suspend: () => Promise.reject(new Error('the benchmark tool does not suspend')),
  };
}
