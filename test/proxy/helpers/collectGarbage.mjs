// Preloaded into a gateway under test (NODE_OPTIONS=--import): a full garbage collection every COLLECT_GARBAGE_MS
// (default 25), so whatever only weak references hold, such as a timeout signal inside AbortSignal.any (nodejs/node#57736),
// goes at once instead of whenever the heap happens to fill. The upstream the gateway spawns does not inherit it.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc');
setInterval(collect, Number(process.env.COLLECT_GARBAGE_MS ?? 25)).unref();
delete process.env.NODE_OPTIONS;
