import type { FastifyBaseLogger } from 'fastify';
import type { ServerResponse } from 'node:http';
import { addEffectSink } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { audience } from '../members/access.repository.js';
import { isRecheck, type BusMessage, type EventBus, type LiveEvent } from './bus.js';
import { ChangePublisher } from './publisher.js';
import { validCredentials, type StreamCredential } from './stream-credentials.js';

export interface LiveOptions {
  /** A comment line at least this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** A stream whose unsent bytes pass this is a reader that does not keep up: it is cut off. */
  maxBufferedBytes: number;
  /** Open streams per user; one more is 429. */
  perUser: number;
  /**
   * How often every stream's credential is checked again, whatever the bus said: the fallback that
   * keeps "a stream ends within 5 s of its session ending" when a signal is lost (Redis away, the
   * `vellum` CLI, which has no bus). One batched read per 500 streams of the instance per period.
   */
  recheckMs: number;
}

export const LIVE_DEFAULTS: LiveOptions = {
  heartbeatMs: 25_000,
  maxBufferedBytes: 256 * 1024,
  perUser: 20,
  recheckMs: 4_000,
};

interface Stream {
  userId: string;
  raw: ServerResponse;
  credential: StreamCredential;
  end(): void;
}

/**
 * Live changes: who listens on this instance (streams by user), and how a change is told to
 * everyone it concerns on every instance (the bus). The services record changes on the database
 * (db/effects.ts); each is published after it is committed and never holds up or fails the request
 * that made it: a lost event costs a client a refresh.
 */
export class LiveEvents {
  private readonly streams = new Map<string, Set<Stream>>();
  private readonly unsubscribe: () => void;
  private readonly unsubscribeGaps: () => void;
  private readonly removeSink: () => void;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly log: FastifyBaseLogger,
    readonly options: LiveOptions,
    /**
     * REQUIRE_SECOND_FACTOR: whether the account must set up a factor first (mfa/mfa.service.ts).
     * Asked when its credentials change (a factor removed), not by the periodic sweep.
     */
    private readonly enrolmentRequired: (userId: string) => Promise<boolean> = async () => false,
  ) {
    this.unsubscribe = bus.subscribe((message) => this.deliver(message));
    this.unsubscribeGaps = bus.onGap(() => this.announceGap());
    // Committed changes of notes, whoever made them, onto the bus.
    this.removeSink = addEffectSink(
      db,
      new ChangePublisher(db, bus, log, () => !(bus.kind === 'local' && this.streams.size === 0)),
    );
    this.sweeper = setInterval(() => void this.sweep(), options.recheckMs).unref();
  }

  /** Whether a stream may open with this credential (an access token whose session ended may not). */
  async isValid(credential: StreamCredential): Promise<boolean> {
    return (await validCredentials(this.db, [credential])).has(credential);
  }

  /**
   * After the commit of anything that ends a session of the user or deletes one of their personal
   * tokens: every instance re-checks the user's streams now (else the sweep finds them within
   * recheckMs). Returns at once; a failure is logged, and the sweep remains.
   */
  credentialsRevoked(userId: string): void {
    if (this.bus.kind === 'local' && !this.streams.has(userId)) return;
    this.bus
      .publish({ recheck: userId })
      .catch((error: unknown) => this.log.warn({ err: error, userId }, 'live events: a re-check was not published'));
  }

  /** Ends the streams whose credential is no longer valid, of one user or of everyone. */
  private async endRevoked(streams: Stream[]): Promise<void> {
    if (streams.length === 0) return;
    const valid = await validCredentials(
      this.db,
      streams.map((s) => s.credential),
    );
    for (const stream of streams) {
      if (valid.has(stream.credential)) continue;
      this.log.info(
        { userId: stream.userId, credential: stream.credential.kind },
        'live events: a stream whose credential was revoked was ended',
      );
      stream.end();
    }
  }

  private sweeping = false;
  private async sweep(): Promise<void> {
    if (this.sweeping || this.streams.size === 0) return;
    this.sweeping = true;
    try {
      await this.endRevoked([...this.streams.values()].flatMap((set) => [...set]));
    } catch (error) {
      this.log.warn({ err: error }, 'live events: the periodic re-check of streams failed');
    } finally {
      this.sweeping = false;
    }
  }

  count(userId: string): number {
    return this.streams.get(userId)?.size ?? 0;
  }

  get total(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }

  /**
   * Keeps the stream until it ends; `end` closes it from here (shutdown, token expiry, a slow
   * reader, its credential revoked): a clean end of the response, which the client reads as the
   * end of the stream.
   */
  add(userId: string, raw: ServerResponse, credential: StreamCredential): Stream {
    const set = this.streams.get(userId) ?? new Set<Stream>();
    this.streams.set(userId, set);
    const heartbeat = setInterval(() => this.write(stream, ': keep-alive\n\n'), this.options.heartbeatMs);
    const stream: Stream = {
      userId,
      raw,
      credential,
      end: () => {
        clearInterval(heartbeat);
        set.delete(stream);
        if (set.size === 0 && this.streams.get(userId) === set) this.streams.delete(userId);
        if (!raw.writableEnded) raw.end();
      },
    };
    set.add(stream);
    raw.on('close', stream.end);
    return stream;
  }

  endAll(): void {
    for (const set of [...this.streams.values()]) for (const stream of [...set]) stream.end();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.removeSink();
    this.endAll();
    this.unsubscribe();
    this.unsubscribeGaps();
    await this.bus.close();
  }

  /** Publishes as a change would (tests: events of any size and number, without saves). */
  publish(event: LiveEvent): Promise<void> {
    return this.bus.publish(event);
  }

  /**
   * Events are handed out one after another, so a stream sees them in the order they were heard; a
   * re-check takes its turn among them, so nothing heard after it reaches a stream it ends.
   */
  private delivering: Promise<void> = Promise.resolve();

  private deliver(message: BusMessage): void {
    if (this.streams.size === 0) return;
    if (isRecheck(message)) {
      if (!this.streams.has(message.recheck)) return;
      this.delivering = this.delivering
        .then(async () => {
          await this.endRevoked([...(this.streams.get(message.recheck) ?? [])]);
          // An account that lost its last factor is sent to enrolment: its streams end, as its
          // other routes are refused (a new stream is 403 mfa_enrolment_required).
          const left = this.streams.get(message.recheck);
          if (left === undefined || left.size === 0 || !(await this.enrolmentRequired(message.recheck))) return;
          this.log.info({ userId: message.recheck }, 'live events: streams of an account sent to enrolment were ended');
          for (const stream of [...left]) stream.end();
        })
        .catch((error: unknown) =>
          this.log.warn({ err: error, userId: message.recheck }, 'live events: a re-check failed'),
        );
      return;
    }
    const event = message;
    this.delivering = this.delivering
      .then(async () => {
        const users = event.users ?? (this.streams.size === 0 ? [] : await audience(this.db, event.data.id));
        const text = `event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
        for (const userId of new Set([...users, ...(event.alsoTell ?? [])])) {
          for (const stream of [...(this.streams.get(userId) ?? [])]) this.write(stream, text);
        }
      })
      .catch((error: unknown) =>
        this.log.warn({ err: error, type: event.type }, 'live events: a change was not delivered'),
      );
  }

  /**
   * The bus lost its connection and has it back: changes made on other instances meanwhile were
   * never heard, so every stream here is told to fetch what it shows again (`resync`, docs/api.md).
   * In turn with the events, so a stream reads it after everything heard before the gap.
   */
  private announceGap(): void {
    if (this.streams.size === 0) return;
    this.delivering = this.delivering.then(() => {
      const text = `event: resync\ndata: ${JSON.stringify({ reason: 'events_missed' })}\n\n`;
      for (const set of [...this.streams.values()]) for (const stream of [...set]) this.write(stream, text);
    });
  }

  private write(stream: Stream, text: string): void {
    if (stream.raw.writableEnded) return;
    // Bytes the socket has not taken: a reader that stopped reading would make them grow for ever.
    if (stream.raw.writableLength > this.options.maxBufferedBytes) {
      this.log.info({ userId: stream.userId }, 'live events: a stream that does not keep up was cut off');
      stream.raw.destroy();
      stream.end();
      return;
    }
    stream.raw.write(text);
  }
}
