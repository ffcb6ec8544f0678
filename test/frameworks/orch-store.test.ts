/**
 * The framework's key-value stores: the embedded one, and Redis against a
 * real redis-server the test starts on a free loopback port (skipped, with
 * the reason printed, where redis-server is not installed). The framework
 * restarted on the same Redis finds its id and tasks again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, openStore, RedisStore, type KeyValueStore } from '../../src/frameworks/orchestrator/store.js';
import { redisMissing, startRedis, type RedisProcess } from './redis-server.js';
import { runningAtMaster, startOrchCluster, startService, testConfig, until } from './orch-harness.js';

async function behavesAsAStore(store: KeyValueStore): Promise<void> {
  expect(await store.get('m3s:framework_id')).toBeUndefined();
  await store.set('m3s:framework_id', 'fw-1');
  await store.set('m3s:task:b', '{"b":1}');
  await store.set('m3s:task:a', '{"a":1}');
  await store.set('other:task:c', 'x');
  await store.set('m3s*:task:d', 'pattern characters are literal');
  expect(await store.get('m3s:framework_id')).toBe('fw-1');
  expect(await store.keys('m3s:task:')).toEqual(['m3s:task:a', 'm3s:task:b']);
  expect(await store.keys('m3s*:')).toEqual(['m3s*:task:d']);
  await store.delete('m3s:task:a');
  expect(await store.keys('m3s:')).toEqual(['m3s:framework_id', 'm3s:task:b']);
  await store.set('m3s:framework_id', 'fw-2');
  expect(await store.get('m3s:framework_id')).toBe('fw-2');
}

describe('the embedded store', () => {
  it('gets, sets, deletes and lists keys by prefix', async () => {
    await behavesAsAStore(new MemoryStore());
  });

  it('is what a configuration without STORE_SERVER opens', async () => {
    expect(await openStore(undefined, undefined)).toBeInstanceOf(MemoryStore);
  });
});

const missing = redisMissing();
if (missing !== undefined) console.warn(`SKIPPED: ${missing}`);

describe.skipIf(missing !== undefined)('the Redis store against a real redis-server', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis('s3cret');
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('gets, sets, deletes and lists keys by prefix, with the password', async () => {
    const store = await openStore(redis.address, 's3cret');
    expect(store).toBeInstanceOf(RedisStore);
    try {
      await behavesAsAStore(store);
    } finally {
      await store.close();
    }
  });

  it('refuses a wrong password and an address where nothing listens, naming STORE_SERVER', async () => {
    await expect(RedisStore.connect(redis.address, 'wrong')).rejects.toThrow(/STORE_SERVER|WRONGPASS|invalid/i);
    await expect(RedisStore.connect('127.0.0.1:1')).rejects.toThrow(/^STORE_SERVER 127\.0\.0\.1:1: /);
  });

  it('keeps the framework across a restart: same id, its tasks recovered and reconciled', async () => {
    const cluster = await startOrchCluster(2);
    try {
      const config = testConfig(cluster, {
        STORE_SERVER: redis.address,
        STORE_PASSWORD: 's3cret',
        FRAMEWORK_NAME: 'm3s-redis',
        ORCH_AGENT_MEM: '256',
      });
      let service = await startService(config);
      const id = () => service.orchestrator.frameworkId;
      await until(
        'every part running',
        () => JSON.stringify(runningAtMaster(cluster, id() ?? '')) === '{"server":1,"agent":1,"datastore":1}',
      );
      await service.orchestrator.flushed();
      const tasks = [...service.orchestrator.tasks.keys()].sort();
      const first = id();
      await service.close();
      service = await startService(config);
      try {
        expect(id()).toBe(first);
        expect([...service.orchestrator.tasks.keys()].sort()).toEqual(tasks);
        await until('reconciled running', () =>
          [...service.orchestrator.tasks.values()].every((t) => t.state === 'TASK_RUNNING'),
        );
        expect(runningAtMaster(cluster, first!)).toEqual({ server: 1, agent: 1, datastore: 1 });
      } finally {
        await service.close();
      }
    } finally {
      await cluster.close();
    }
  });
});
