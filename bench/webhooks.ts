// `npm run bench:webhooks`: webhook delivery from the store's outbox to a receiver on 127.0.0.1.
//  1. first-attempt latency, publish → the receiver has the request, one event at a time: the delivering process is the
//     publishing one (it is woken at once), then another process sharing the SQLite file (it polls every 50 ms);
//  2. a kill -9 of the delivering process mid-delivery: events lost (must be 0) and duplicates (repeats of a
//     webhook-id the killed process held, delivered again by the next one).
import { fmt, percentile } from './measure.js';
import { WebhookOutboxBench } from './webhookOutboxBench.js';

const ROUNDS = Number(process.env['BENCH_WEBHOOK_ROUNDS'] ?? 300);
const CRASH_EVENTS = Number(process.env['BENCH_WEBHOOK_CRASH_EVENTS'] ?? 300);

const line = (label: string, sample: number[]) =>
  console.log(
    `${label.padEnd(46)} p50 ${fmt(percentile(sample, 50), 1)} ms   p99 ${fmt(percentile(sample, 99), 1)} ms   (n=${sample.length})`,
  );

const bench = await WebhookOutboxBench.start();
try {
  console.log(`webhook delivery, SQLite outbox, receiver on 127.0.0.1 (Node ${process.version})`);
  line('first attempt, delivered by the publishing process', await bench.latencySameProcess(ROUNDS));
  line('first attempt, delivered by another process', await bench.latencyOtherProcess(ROUNDS));
  const crash = await bench.killDuringDelivery(CRASH_EVENTS);
  console.log(
    `kill -9 mid-delivery: ${crash.events} events, killed after ${crash.killedAfter} requests (${crash.held} left unanswered); ` +
      `lost ${crash.lost}, duplicates ${crash.duplicates} ` +
      `(all repeats of a webhook-id: ${crash.foreign === 0 ? 'yes' : 'NO'}), all delivered ${fmt(crash.restartMs)} ms after the restart`,
  );
  if (crash.lost > 0 || crash.foreign > 0) process.exitCode = 1;
} finally {
  bench.close();
}
