import type { FastifyBaseLogger } from 'fastify';
import { findUserById } from '../accounts/user.repository.js';
import type { EffectSink, NoteChange } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import type { EventBus } from './bus.js';

/**
 * Committed changes of notes onto the bus (db/effects.ts): the server's live events, and the CLI's
 * writes (the trash purge of `vellum maintenance`), which have no streams of their own to tell.
 */
export class ChangePublisher implements EffectSink {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly log: FastifyBaseLogger,
    private readonly hearing: () => boolean = () => bus.kind !== 'local',
  ) {}

  /** With no one listening anywhere (one process, no stream), there is nothing to tell. */
  get listening(): boolean {
    return this.hearing();
  }

  /** Tells the note's owner and members (and `alsoTell`); returns at once, the work and any failure happen after. */
  noteChanged(change: NoteChange): void {
    if (!this.listening) return;
    const { type, noteId } = change;
    const sending = (async () => {
      const author = change.authorId === undefined ? undefined : await this.usernameOf(change.authorId);
      const data = {
        id: noteId,
        ...(change.version !== undefined && { version: change.version }),
        ...(author !== undefined && { author_username: author }),
      };
      // Who is told is worked out where the streams are (an instance without any reads nothing),
      // except when the change removes what says so (a delete): then it was read before.
      await this.bus.publish({
        type,
        data,
        ...(change.users !== undefined && { users: change.users }),
        ...(change.alsoTell !== undefined && { alsoTell: change.alsoTell }),
        ...(change.live === true && { live: true }),
      });
    })().catch((error: unknown) =>
      this.log.warn({ err: error, type, noteId }, 'live events: a change was not published'),
    );
    this.sending.add(sending);
    void sending.finally(() => this.sending.delete(sending));
  }

  private readonly sending = new Set<Promise<void>>();

  /** Once every change handed over so far has been published (or given up): before a process exits. */
  async settled(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  /** Usernames never change, so each author is looked up once (bounded; a deleted one is null). */
  private readonly usernames = new Map<string, string>();
  private async usernameOf(userId: string): Promise<string | null> {
    const known = this.usernames.get(userId);
    if (known !== undefined) return known;
    const username = (await findUserById(this.db, userId))?.username;
    if (username === undefined) return null;
    if (this.usernames.size >= 10_000) this.usernames.delete(this.usernames.keys().next().value!);
    this.usernames.set(userId, username);
    return username;
  }
}
