import { afterAll, beforeAll } from 'vitest';

import type { HttpPeer } from '../helpers/rawWire.js';
import { Cluster } from './cluster.js';
import { core20251125 as wire } from './dialects.js';
import { RedisServer, type AppendFsync } from './redisServer.js';
import { unique } from './suites.js';

/** A Redis of the suite's own holding both store and queue, the cluster on it, and two initialized peers. */
export interface RedisCluster {
  redis: RedisServer;
  cluster: Cluster;
  a: HttpPeer;
  b: HttpPeer;
}

/**
 * Starts a {@link RedisCluster} before the suite's tests and stops it after them. The returned object is filled in
 * by the suite's `beforeAll`, so read its fields inside tests only.
 */
export function useRedisCluster(options: {
  queue: string;
  env: Record<string, string>;
  appendfsync?: AppendFsync;
}): RedisCluster {
  const fixture = {} as RedisCluster;
  beforeAll(async () => {
    fixture.redis = await RedisServer.start({ appendfsync: options.appendfsync });
    fixture.cluster = await Cluster.start({
      store: `${fixture.redis.url}/0`,
      redisUrl: fixture.redis.url,
      queue: unique(options.queue),
      env: options.env,
    });
    fixture.a = await fixture.cluster.peer(0);
    fixture.b = await fixture.cluster.peer(1);
    await wire.initialize(fixture.a);
    await wire.initialize(fixture.b);
  });
  afterAll(async () => {
    await fixture.cluster?.close();
    await fixture.redis?.kill('SIGTERM');
  });
  return fixture;
}
