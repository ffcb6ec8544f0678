/**
 * The framework's state in a key-value store, every key under the
 * `FRAMEWORK_NAME` prefix (`<name>:framework_id`, `<name>:task:<id>`,
 * `<name>:scale:<part>`, `<name>:ca`): an embedded store in the process by
 * default, Redis when `STORE_SERVER` is set. A framework that restarts on
 * the same store finds its id, its tasks and its counts again.
 */
import type { Redis } from 'ioredis';

export interface KeyValueStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** Keys that begin with the prefix, sorted. */
  keys(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The embedded store: a map in the process (kept across framework restarts in the same process). */
export class MemoryStore implements KeyValueStore {
  readonly #data = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    return this.#data.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.#data.set(key, value);
  }

  async delete(key: string): Promise<void> {
    this.#data.delete(key);
  }

  async keys(prefix: string): Promise<string[]> {
    return [...this.#data.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  async close(): Promise<void> {}
}

/** Redis through ioredis; `address` is `host:port`. */
export class RedisStore implements KeyValueStore {
  readonly #redis: Redis;

  private constructor(redis: Redis) {
    this.#redis = redis;
  }

  /** Connects (and authenticates with the password, if any); rejects when the server cannot be reached. */
  static async connect(address: string, password?: string): Promise<RedisStore> {
    const at = address.lastIndexOf(':');
    // Loaded only for a Redis store: the embedded one needs no client.
    const { Redis } = await import('ioredis');
    const redis = new Redis({
      host: address.slice(0, at),
      port: Number(address.slice(at + 1)),
      ...(password === undefined ? {} : { password }),
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
    });
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (e) {
      redis.disconnect();
      throw new Error(`STORE_SERVER ${address}: ${(e as Error).message}`);
    }
    return new RedisStore(redis);
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.#redis.get(key)) ?? undefined;
  }

  async set(key: string, value: string): Promise<void> {
    await this.#redis.set(key, value);
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(key);
  }

  async keys(prefix: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    do {
      const [next, batch] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 200);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return [...new Set(found)].sort();
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

/** The store of a configuration: Redis at `storeServer`, else a new embedded one. */
export async function openStore(storeServer: string | undefined, password: string | undefined): Promise<KeyValueStore> {
  return storeServer === undefined ? new MemoryStore() : RedisStore.connect(storeServer, password);
}
