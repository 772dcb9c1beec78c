import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { NOTE_CHANGE_TYPES } from '../db/effects.js';
import { databaseChannel, type Channel } from '../db/notifications.js';
import { REDIS_CHANNEL_DEFAULTS, redisChannel, type RedisChannelTimeouts } from './redis-channel.js';

/**
 * A change of a note, for everyone it concerns: its owner and members, read by each instance that
 * has streams when it hears the event — or `users`, read before a change that removes them (a
 * delete) — and `alsoTell` (a member who just left). `data` is what the stream sends (at least the
 * note's id).
 */
export interface LiveEvent {
  type: EventType;
  data: { id: string; [key: string]: unknown };
  users?: string[];
  alsoTell?: string[];
  /** Written from a live co-editing session (src/collab); not sent to streams. */
  live?: boolean;
}

/**
 * Not an event for clients: "the credentials of this user changed" (a session ended, a personal
 * token was deleted), published after the change commits. Every instance re-checks that user's
 * streams at once and ends those that lost their ground (events/live.ts).
 */
export interface RecheckSignal {
  recheck: string;
}

export type BusMessage = LiveEvent | RecheckSignal;

export const isRecheck = (message: BusMessage): message is RecheckSignal => 'recheck' in message;

export const EVENT_TYPES = NOTE_CHANGE_TYPES;
export type EventType = (typeof EVENT_TYPES)[number];

/** How events travel between instances; every instance hears every event, its own included. */
export interface EventBus {
  readonly kind: Channel['kind'];
  publish(message: BusMessage): Promise<void>;
  /** Called for every message published on any instance; returns the unsubscribe. */
  subscribe(listener: (message: BusMessage) => void): () => void;
  /** Called when messages from other instances may have been missed (the channel was lost and is back). */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}

const CHANNEL = 'vellum_events';

/** Redis when REDIS_URL is set, else the database's own channel (LISTEN/NOTIFY, or this process on SQLite). */
export async function createBus(
  config: Config,
  log: FastifyBaseLogger,
  redisTimeouts: Partial<RedisChannelTimeouts> = {},
  checkpoint?: (step: string) => Promise<void>,
): Promise<EventBus> {
  const channel =
    config.redisUrl !== undefined
      ? await redisChannel(
          config.redisUrl,
          `${config.redisKeyPrefix}events`,
          log,
          { ...REDIS_CHANNEL_DEFAULTS, ...redisTimeouts },
          checkpoint,
        )
      : databaseChannel(config.database, CHANNEL, log, checkpoint);
  return {
    kind: channel.kind,
    publish: (event) => channel.publish(JSON.stringify(event)),
    subscribe(listener) {
      return channel.subscribe((payload) => {
        const event = decodeEvent(payload);
        if (event !== undefined) listener(event);
      });
    },
    onGap: (listener) => channel.onGap(listener),
    close: () => channel.close(),
  };
}

/** What goes over the wire; anything else heard on the channel is dropped. */
function decodeEvent(text: string): BusMessage | undefined {
  try {
    const value = JSON.parse(text) as LiveEvent & Partial<RecheckSignal>;
    if (value !== null && typeof value === 'object' && 'recheck' in value) {
      return typeof value.recheck === 'string' && Object.keys(value).length === 1
        ? { recheck: value.recheck }
        : undefined;
    }
    const list = (users: unknown) =>
      users === undefined || (Array.isArray(users) && users.every((u) => typeof u === 'string'));
    if (
      !(EVENT_TYPES as readonly string[]).includes(value.type) ||
      typeof value.data?.id !== 'string' ||
      !list(value.users) ||
      !list(value.alsoTell) ||
      (value.live !== undefined && value.live !== true)
    )
      return undefined;
    return value;
  } catch {
    return undefined;
  }
}
