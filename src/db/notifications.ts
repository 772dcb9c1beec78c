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
  close(): Promise<void>;
}

/** PostgreSQL's limit on a NOTIFY payload, in bytes. */
export const NOTIFY_MAX_BYTES = 8000;

export function databaseChannel(config: DatabaseConfig, name: string, log: FastifyBaseLogger): Channel {
  return config.kind === 'postgres' ? postgresChannel(config.url, name, log) : localChannel();
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
    async close() {
      emitter.removeAllListeners();
    },
  };
}

const RECONNECT_MS = 1000;
/** How long connecting for a NOTIFY, or sending one, may take before the message is given up. */
const PUBLISH_TIMEOUT_MS = 5000;
/** Messages waiting for the publishing connection, at most; more are refused (and logged by the caller). */
const MAX_WAITING = 10_000;

/**
 * One connection of its own listens (reconnecting when it drops); a publish is a NOTIFY on another,
 * so every instance on the database hears every message within the time a notification takes.
 */
function postgresChannel(url: string, name: string, log: FastifyBaseLogger): Channel {
  const listeners = new Set<(payload: string) => void>();
  let listener: pg.Client | undefined;
  let closed = false;
  let publisher: pg.Client | undefined;
  let publisherReady: Promise<pg.Client> | undefined;

  async function listen(): Promise<void> {
    if (closed) return;
    const client = new pg.Client({ connectionString: url });
    client.on('notification', (message) => {
      if (message.payload !== undefined) for (const fn of listeners) fn(message.payload);
    });
    const retry = () => {
      client.end().catch(() => undefined);
      if (listener === client) listener = undefined;
      if (!closed) setTimeout(() => void listen().catch(() => undefined), RECONNECT_MS).unref();
    };
    client.on('error', (error) => {
      log.warn({ err: error }, 'notifications: the LISTEN connection failed; reconnecting');
      retry();
    });
    try {
      await client.connect();
      await client.query(`listen ${name}`);
      listener = client;
    } catch (error) {
      log.warn({ err: error }, 'notifications: cannot LISTEN; retrying');
      retry();
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
    async close() {
      closed = true;
      await started;
      // The message being sent finishes (or times out); those behind it are refused (closed).
      await last;
      await publisherReady?.catch(() => undefined);
      await Promise.all([listener?.end(), publisher?.end()].map((p) => p?.catch(() => undefined)));
    },
  };
}
