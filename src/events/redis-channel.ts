import type { FastifyBaseLogger } from 'fastify';
import type { Channel } from '../db/notifications.js';

/**
 * Redis pub/sub (REDIS_URL set): a subscriber connection and a publisher, ioredis reconnecting
 * (and subscribing again) by itself. Loaded only when REDIS_URL is set.
 */
export async function redisChannel(url: string, name: string, log: FastifyBaseLogger): Promise<Channel> {
  const { Redis } = await import('ioredis');
  // Never waited for: a Redis that is down or silent must not hold up start-up (the throttle
  // counters' breaker decides about those), and a publish while it is away fails at once and is
  // dropped (no queue growing in memory); the subscriber subscribes again whenever it reconnects.
  const publisher = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
  });
  const subscriber = new Redis(url, { lazyConnect: true, connectTimeout: 2_000 });
  for (const client of [publisher, subscriber])
    client.on('error', (error: Error) => log.warn({ err: error }, 'live events: Redis connection failed'));
  const listeners = new Set<(payload: string) => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    for (const fn of listeners) fn(message);
  });
  publisher.connect().catch(() => undefined);
  subscriber.connect().catch(() => undefined);
  subscriber.subscribe(name).catch((error: unknown) => log.warn({ err: error }, 'live events: SUBSCRIBE failed'));
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
