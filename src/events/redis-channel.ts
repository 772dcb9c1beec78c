import type { FastifyBaseLogger } from 'fastify';
import type { Channel } from '../db/notifications.js';

/** How the subscriber notices a silent network: a PING this often, answered within this long. */
export interface RedisChannelTimeouts {
  pingEveryMs: number;
  pingTimeoutMs: number;
}

export const REDIS_CHANNEL_DEFAULTS: RedisChannelTimeouts = { pingEveryMs: 10_000, pingTimeoutMs: 5_000 };

/**
 * Redis pub/sub (REDIS_URL set): a subscriber connection and a publisher, ioredis reconnecting by
 * itself. Loaded only when REDIS_URL is set. The subscriber subscribes again itself on every
 * reconnection (not ioredis's auto-resubscribe, which sends SUBSCRIBE after announcing "ready"), so
 * it knows when it hears the channel again: then the subscribers are told that messages may have
 * been missed. It is pinged, since a silent network closes nothing and an idle subscriber would
 * wait for ever (issue #43).
 */
export async function redisChannel(
  url: string,
  name: string,
  log: FastifyBaseLogger,
  timeouts: RedisChannelTimeouts = REDIS_CHANNEL_DEFAULTS,
  checkpoint?: (step: string) => Promise<void>,
): Promise<Channel> {
  const { Redis } = await import('ioredis');
  // Never waited for: a Redis that is down or silent must not hold up start-up (the throttle
  // counters' breaker decides about those), and a publish while it is away fails at once and is
  // dropped (no queue growing in memory).
  const publisher = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
  });
  const subscriber = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, autoResubscribe: false });
  for (const client of [publisher, subscriber])
    client.on('error', (error: Error) => log.warn({ err: error }, 'live events: Redis connection failed'));
  const listeners = new Set<(payload: string) => void>();
  const gapListeners = new Set<() => void>();
  subscriber.on('message', (_channel: string, message: string) => {
    for (const fn of listeners) fn(message);
  });
  let closed = false;
  // Set when the subscriber's connection closes (a first connection that fails included: streams
  // may have opened meanwhile); cleared when it hears the channel again.
  let missed = false;
  let pinger: NodeJS.Timeout | undefined;
  subscriber.on('close', () => {
    missed = true;
    clearTimeout(pinger);
  });
  subscriber.on('ready', () => {
    subscriber.subscribe(name).then(
      () => {
        if (missed) {
          missed = false;
          log.info('live events: Redis subscribed again; streams told that events may have been missed');
          for (const fn of gapListeners) fn();
        }
        ping();
      },
      (error: unknown) => {
        log.warn({ err: error }, 'live events: SUBSCRIBE failed; reconnecting');
        if (!closed) subscriber.disconnect(true);
      },
    );
  });
  const ping = () => {
    clearTimeout(pinger);
    pinger = setTimeout(async () => {
      // Tests hold the pings here, so that only the silence they make can fail one.
      await checkpoint?.('events:ping');
      let timer: NodeJS.Timeout | undefined;
      Promise.race([
        subscriber.ping(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error('PING not answered')), timeouts.pingTimeoutMs);
        }),
      ])
        .then(ping, (error: unknown) => {
          if (closed) return;
          log.warn({ err: error }, 'live events: the Redis subscriber did not answer; reconnecting');
          // ioredis cuts a socket that does not close within its disconnect time-out, then reconnects.
          subscriber.disconnect(true);
        })
        .finally(() => clearTimeout(timer));
    }, timeouts.pingEveryMs);
    pinger.unref();
  };
  publisher.connect().catch(() => undefined);
  subscriber.connect().catch(() => undefined);
  return {
    kind: 'redis',
    async publish(payload) {
      await publisher.publish(name, payload);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    onGap(fn) {
      gapListeners.add(fn);
      return () => gapListeners.delete(fn);
    },
    async close() {
      closed = true;
      clearTimeout(pinger);
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
