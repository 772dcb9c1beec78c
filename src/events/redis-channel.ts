import type { FastifyBaseLogger } from 'fastify';
import type { Channel } from '../db/notifications.js';

/**
 * Redis pub/sub (REDIS_URL set): a subscriber connection and a publisher, ioredis reconnecting
 * (and subscribing again) by itself. Loaded only when REDIS_URL is set.
 */
export async function redisChannel(url: string, name: string, log: FastifyBaseLogger): Promise<Channel> {
  const { Redis } = await import('ioredis');
  const options = { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
  const publisher = new Redis(url, options);
  const subscriber = new Redis(url, options);
  for (const client of [publisher, subscriber]) client.on('error', (error: Error) => log.warn({ err: error }, 'live events: Redis connection failed'));
  const listeners = new Set<(payload: string) => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    for (const fn of listeners) fn(message);
  });
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
    await subscriber.subscribe(name);
  } catch (error) {
    log.warn({ err: error }, 'live events: Redis not reachable at start-up; events wait for it');
  }
  return {
    kind: 'redis',
    async publish(payload) {
      await publisher.publish(name, payload);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
