import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';

/**
 * A channel of text messages every instance on the database hears, its own included: PostgreSQL's
 * LISTEN/NOTIFY, or, on SQLite (one process), this process alone. Live events travel on it
 * (events/bus.ts) unless REDIS_URL gives them Redis.
 */
export interface Channel {
  readonly kind: 'local' | 'postgres' | 'redis';
  publish(payload: string): Promise<void>;
  /** Returns the unsubscribe. */
  subscribe(listener: (payload: string) => void): () => void;
  /**
   * Called when messages may have been missed: the listening connection was lost (or never made)
   * and is listening again. Returns the unsubscribe.
   */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}

/** PostgreSQL's limit on a NOTIFY payload, in bytes. */
export const NOTIFY_MAX_BYTES = 8000;

/** `checkpoint` (tests only) pauses the listening connection's ping at 'events:ping'. */
export function databaseChannel(
  config: DatabaseConfig,
  name: string,
  log: FastifyBaseLogger,
  checkpoint?: (step: string) => Promise<void>,
): Channel {
  return config.kind === 'postgres'
    ? postgresChannel(
        config.url,
        name,
        log,
        listenerTimeouts(config.connectTimeoutMs, config.queryTimeoutMs),
        checkpoint,
      )
    : localChannel();
}

/** How the LISTEN connection notices a dead network: a ping this often, answered within this long. */
export interface ListenerTimeouts {
  connectTimeoutMs: number;
  pingEveryMs: number;
  pingTimeoutMs: number;
}

/**
 * From DATABASE_CONNECT_TIMEOUT_SECONDS and DATABASE_QUERY_TIMEOUT_SECONDS: a ping at most every
 * 10 s (sooner with a shorter query time-out), so a silent network is noticed within two of them.
 */
export function listenerTimeouts(connectTimeoutMs = 5_000, queryTimeoutMs = 30_000): ListenerTimeouts {
  const ping = Math.min(10_000, queryTimeoutMs);
  return { connectTimeoutMs, pingEveryMs: ping, pingTimeoutMs: ping };
}

function localChannel(): Channel {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    kind: 'local',
    async publish(payload) {
      // Asynchronously, as NOTIFY delivers: a listener never runs inside the publisher's request.
      setImmediate(() => emitter.emit('message', payload));
    },
    subscribe(listener) {
      emitter.on('message', listener);
      return () => emitter.off('message', listener);
    },
    // One process: nothing travels a network, nothing is missed.
    onGap: () => () => undefined,
    async close() {
      emitter.removeAllListeners();
    },
  };
}

/** The first reconnection waits this long, each next one twice as long, up to RECONNECT_MAX_MS. */
const RECONNECT_MS = 500;
const RECONNECT_MAX_MS = 30_000;
/** How long connecting for a NOTIFY, or sending one, may take before the message is given up. */
const PUBLISH_TIMEOUT_MS = 5000;
/** Messages waiting for the publishing connection, at most; more are refused (and logged by the caller). */
const MAX_WAITING = 10_000;

/**
 * Ends a client without waiting on the network for more than `graceMs`: `end()` waits for the
 * server to close its side, which a silent network never does (issue #43: SIGTERM took 15 s), so
 * after the grace the socket is cut.
 */
export async function cutClient(client: pg.Client, graceMs = 0): Promise<void> {
  const ended = client.end().catch(() => undefined);
  if (graceMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * One connection of its own listens; a publish is a NOTIFY on another, so every instance on the
 * database hears every message within the time a notification takes. The listening connection has
 * TCP keep-alive and is pinged (a dead network drops packets without closing anything, so an idle
 * LISTEN would otherwise wait for ever, issue #43); lost, it is made again with a growing delay,
 * and once it listens again the subscribers are told that messages may have been missed.
 */
function postgresChannel(
  url: string,
  name: string,
  log: FastifyBaseLogger,
  timeouts: ListenerTimeouts,
  checkpoint?: (step: string) => Promise<void>,
): Channel {
  const listeners = new Set<(payload: string) => void>();
  const gapListeners = new Set<() => void>();
  let listener: pg.Client | undefined;
  let closed = false;
  let publisher: pg.Client | undefined;
  let publisherReady: Promise<pg.Client> | undefined;
  let failures = 0;
  let pinger: NodeJS.Timeout | undefined;
  let reconnect: NodeJS.Timeout | undefined;

  async function listen(): Promise<void> {
    if (closed) return;
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: timeouts.connectTimeoutMs,
      query_timeout: timeouts.pingTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    client.on('notification', (message) => {
      if (message.payload !== undefined) for (const fn of listeners) fn(message.payload);
    });
    let given = false;
    const retry = (error: unknown, what: string) => {
      if (given) return;
      given = true;
      if (!closed) log.warn({ err: error }, `notifications: ${what}; reconnecting`);
      if (listener === client) {
        listener = undefined;
        clearTimeout(pinger);
      }
      void cutClient(client);
      failures += 1;
      if (closed) return;
      const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MS * 2 ** (failures - 1));
      reconnect = setTimeout(() => void listen(), delay);
      reconnect.unref();
    };
    client.on('error', (error) => retry(error, 'the LISTEN connection failed'));
    client.on('end', () => retry(new Error('connection ended'), 'the LISTEN connection ended'));
    const ping = () => {
      pinger = setTimeout(() => {
        // Tests hold the pings here, so that only the silence they make can fail one.
        (checkpoint?.('events:ping') ?? Promise.resolve())
          .then(() => client.query('select 1'))
          .then(ping, (error: unknown) => retry(error, 'the LISTEN connection did not answer'));
      }, timeouts.pingEveryMs);
      pinger.unref();
    };
    try {
      await client.connect();
      await client.query(`listen ${name}`);
    } catch (error) {
      retry(error, 'cannot LISTEN');
      return;
    }
    if (closed || given) {
      void cutClient(client);
      return;
    }
    listener = client;
    ping();
    if (failures > 0) {
      // Whatever was published while no connection listened is lost: the subscribers catch up.
      failures = 0;
      log.info('notifications: listening again; subscribers told that messages may have been missed');
      for (const fn of gapListeners) fn();
    }
  }
  const started = listen();

  function connectPublisher(): Promise<pg.Client> {
    if (closed) return Promise.reject(new Error('notifications: closed'));
    publisherReady ??= (async () => {
      // Bounded, so that a database that stops answering fails a message instead of holding the
      // queue behind it for a TCP time-out.
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: PUBLISH_TIMEOUT_MS,
        query_timeout: PUBLISH_TIMEOUT_MS,
        keepAlive: true,
      });
      client.on('error', (error) => {
        log.warn({ err: error }, 'notifications: the NOTIFY connection failed');
        dropPublisher(client);
      });
      await client.connect();
      publisher = client;
      return client;
    })().catch((error: unknown) => {
      publisherReady = undefined;
      throw error;
    });
    return publisherReady;
  }
  function dropPublisher(client: pg.Client): void {
    if (publisher !== client) return;
    publisher = undefined;
    publisherReady = undefined;
    client.end().catch(() => undefined);
  }

  // One NOTIFY at a time on the publishing connection: pg queues a query sent while another runs,
  // but that is deprecated (an error in pg 9); the chain also keeps the messages in publish order.
  // A message that cannot wait (too many ahead of it, or closed) is refused at once: a lost event
  // costs a client a refresh (events/live.ts).
  let last: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  return {
    kind: 'postgres',
    publish(payload) {
      if (closed) return Promise.reject(new Error('notifications: closed'));
      if (waiting >= MAX_WAITING)
        return Promise.reject(new Error(`notifications: ${waiting} messages already waiting`));
      waiting += 1;
      const sent = last
        .then(async () => {
          const client = await connectPublisher();
          try {
            await client.query('select pg_notify($1, $2)', [name, payload]);
          } catch (error) {
            // A time-out leaves the connection in an unknown state: the next message opens a new one.
            // Any other refusal (a payload over NOTIFY_MAX_BYTES) leaves it as it was.
            if (error instanceof Error && /timeout/i.test(error.message)) dropPublisher(client);
            throw error;
          }
        })
        .finally(() => {
          waiting -= 1;
        });
      last = sent.catch(() => undefined);
      return sent;
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
      clearTimeout(reconnect);
      await started;
      // The message being sent finishes (or times out); those behind it are refused (closed).
      await last;
      await publisherReady?.catch(() => undefined);
      await Promise.all([listener, publisher].map((client) => client && cutClient(client, 1_000)));
    },
  };
}
