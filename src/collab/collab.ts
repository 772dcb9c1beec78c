import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type Extension, Hocuspocus, type Document, type Connection } from '@hocuspocus/server';
import type { FastifyBaseLogger } from 'fastify';
import diff from 'fast-diff';
import { WebSocketServer } from 'ws';
import * as Y from 'yjs';
import type { EffectSink, NoteChange } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation } from '../db/values.js';
import { AppError } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import { noteRole, type NoteRole } from '../members/access.repository.js';
import { findVersionByNumber } from '../notes/notes.repository.js';
import { checkText, getNote, writeVersion } from '../notes/notes.service.js';
import { TITLE_MAX_CHARACTERS } from '../limits.js';
import { isUuid } from '../shared/ids.js';
import { applyVouched, BROADCAST_STATELESS, messageTypeOf } from './awareness.js';
import * as repo from './collab.repository.js';
import { SocketGuard } from './socket-guard.js';

/**
 * Live co-editing (CONTRACT.md, "Many hands and devices"; issue #39): a WebSocket at /api/collab
 * speaking the Yjs sync and awareness protocol through Hocuspocus. The document name is the note's
 * id; its shared types are `title` and `content` (Y.Text). The server keeps one more map, `vellum`,
 * that clients leave alone: the version number the document has taken in (`version`) and who has
 * typed since the last version (`author:<user id>` → order of arrival), so that every instance
 * (Redis) and a restart know them.
 *
 * - Authentication: the first message carries the access token (Hocuspocus `token`); personal
 *   access tokens are refused (they are for scripts: those save through the API, merging). The
 *   role comes from members/access.repository.ts (`noteRole`), as for the routes: owner and editors
 *   write, viewers get a read-only connection, anyone else is refused.
 * - Loading: the stored Yjs state (collab_documents), else the note's current version. A state
 *   that has fallen behind the note (saved through the API while nobody had it open, then a
 *   restart) takes the newer versions in by a three-way merge, from the newest version whose text
 *   it already is (a version written from it just before an instance stopped, its number unstored).
 * - Storing: on change, debounced (Hocuspocus), so a restart loses nothing acknowledged.
 * - Versions: after `idleMs` without a change, and when the last person on this instance leaves,
 *   the text is saved through the one save path (notes.service writeVersion: tags, references,
 *   search, events) with everyone who typed as `authors`; nothing is written when the text is the
 *   note's current one.
 * - Saves made elsewhere (API, WebDAV, a restore) reach the live document as an edit: the effects
 *   after their commit (db/effects.ts, or the bus across instances) diff the text and apply it as
 *   Y.Text deletes and inserts.
 * - Access ending (member removed or demoted, note trashed or deleted, session ended) closes the
 *   connections or makes them read-only; a connection made read-only, or writable again, is told
 *   by a stateless message (`roleMessage`). When the bus (or Redis) lost messages for a while, every
 *   connection is checked again, every document takes in the note's current version, and (Redis)
 *   the instances exchange what their copies lack: nothing announced meanwhile is left unapplied.
 * - The name and colour beside a cursor are the account's (awareness.ts), whatever a client claims.
 * - At most `perUser` connections per account on an instance; one more is refused with
 *   `too_many_connections`.
 */

export interface CollabOptions {
  db: Db;
  log: FastifyBaseLogger;
  /** COLLAB_IDLE_SECONDS in ms. */
  idleMs: number;
  /** The user an access token belongs to while its session lives (never a personal token), or undefined. */
  authenticate: (
    token: string,
  ) => Promise<{ userId: string; username: string; stillValid: () => Promise<boolean> } | undefined>;
  /** The live events' bus: changes and signals from every instance (when it is not only this process). */
  bus?: EventBus;
  /** REDIS_URL: documents shared with the other instances through @hocuspocus/extension-redis. */
  redis?: { url: string; prefix: string };
  /** Hocuspocus' debounce for storing, in ms (tests shorten it). */
  storeDebounceMs?: number;
  /** Connections (one per open note) an account may have on this instance; COLLAB_CONNECTIONS_PER_USER by default. */
  perUser?: number;
  /**
   * Tests: pauses at `collab:version`, once a version's text and authors are taken, before it is
   * written; `notes:version-authors`, once it is saved and before its several authors are (in the
   * same transaction); `collab:version-written`, before the state naming it is stored; `collab:close-waits`.
   */
  checkpoint?: (step: string) => Promise<void>;
}

/**
 * Every open note of every tab and device is one connection: 20 is several people's worth of
 * windows, and keeps one account (or a stolen token) from holding an instance's memory with
 * thousands of documents.
 */
export const COLLAB_CONNECTIONS_PER_USER = 20;

/** The refusal's reason, which the client shows (docs/api.md). */
export const TOO_MANY_CONNECTIONS = 'too_many_connections';

/** How long an admitted connection counts towards its account's cap before it is established. */
const ADMISSION_MS = 30_000;

interface Context {
  userId: string;
  username: string;
  role: NoteRole;
  ownerId: string;
  stillValid: () => Promise<boolean>;
  /** Its place in the account's count until it is established. */
  admission?: { expires: number };
  /** Access checks started on this connection, and the latest of them applied so far. */
  checks?: number;
  applied?: number;
}

/**
 * The title a version of the live text gets: at most TITLE_MAX_CHARACTERS, as every title. Each
 * person's title field stops there, but two typing into it at once can take it past (and a client
 * need not stop at all); the version keeps the first ones, so that the text still becomes history
 * and the account's export imports again.
 */
function versionTitle(live: string): string {
  const characters = [...live];
  return characters.length > TITLE_MAX_CHARACTERS ? characters.slice(0, TITLE_MAX_CHARACTERS).join('') : live;
}

/** Per open document on this instance. */
interface Session {
  ownerId: string;
  idle?: NodeJS.Timeout;
  /** One version write or save application at a time, in order. */
  queue: Promise<void>;
}

/** Transaction origins of the server's own edits (never counted as someone's typing). */
const SERVER = 'vellum-server';
const META = 'vellum';

/**
 * An author entry of the META map: the order of their first typing since the last version, or,
 * while a version with their typing is being written, that order and the write's mark.
 */
type AuthorEntry = number | { order: number; writing: string };
const authorOrder = (entry: unknown): number =>
  typeof entry === 'number' ? entry : ((entry as Exclude<AuthorEntry, number> | undefined)?.order ?? 0);
const writingMark = (entry: unknown): string | undefined =>
  typeof entry === 'object' && entry !== null ? (entry as { writing?: string }).writing : undefined;

/**
 * The stateless message a connection receives when its role on the note changes while it is open:
 * `{"type":"role","role":"viewer"}` (its updates are dropped from now on) or `"editor"` (taken again).
 */
function roleMessage(role: NoteRole): string {
  return JSON.stringify({ type: 'role', role });
}

/** Close codes (Hocuspocus' own 4401/4403 conventions). */
const FORBIDDEN = { code: 4403, reason: 'Forbidden' };

/**
 * A document's catch-up after a gap is tried again 1 s, 2 s, 4 s… apart, then every 30 s for as long
 * as the document is open: giving up would leave a save made during the gap out of the live text, and
 * the session's next version would then write over it.
 */
const CATCH_UP_RETRY_MS = 1000;
const CATCH_UP_RETRY_MAX_MS = 30_000;
/** Failed attempts after which each further one is a warning, not information. */
const CATCH_UP_QUIET_RETRIES = 4;

/** How long closing waits for Redis to acknowledge QUIT before cutting the connections. */
const REDIS_QUIT_MS = 2_000;

export class Collab implements EffectSink {
  hocuspocus!: Hocuspocus;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  private readonly guard: SocketGuard;
  private readonly sessions = new Map<string, Session>();
  /** Documents unloaded whose queued work is still running. */
  private readonly unloaded = new Map<string, Session>();
  private unsubscribe?: () => void;
  private claimClient?: {
    set: (key: string, value: string, ex: 'EX', seconds: number, nx: 'NX') => Promise<unknown>;
    disconnect: () => void;
  };
  private closed = false;
  /** Connections admitted (authenticated) and not yet established, per account, with when they expire. */
  private readonly admitting = new Map<string, Set<{ expires: number }>>();
  private unsubscribeGap?: () => void;
  private redisExtension?: Extension;
  /** Every Redis connection made for the extension and the claims, cut at close whatever Redis does. */
  private readonly redisClients: Array<{ disconnect(): void }> = [];
  /** Closed and done: the database may be closed next, nothing more is stored. */
  private destroyed = false;

  constructor(private readonly options: CollabOptions) {
    this.guard = new SocketGuard(options.log);
  }

  /** Builds the server, with Redis (when configured) and the bus; called once, before listening. */
  async start(): Promise<void> {
    const { redis, bus } = this.options;
    const extensions: Extension[] = [];
    if (redis !== undefined) {
      const [{ Redis: RedisExtension }, { Redis: IORedis }] = await Promise.all([
        import('@hocuspocus/extension-redis'),
        import('ioredis'),
      ]);
      const create = () => {
        const client = new IORedis(redis.url, { connectTimeout: 2_000 });
        client.on('error', (error: Error) => this.options.log.warn({ err: error }, 'collab: Redis connection failed'));
        // Connected again after a loss: what the other instances published meanwhile was missed.
        let connectedBefore = false;
        client.on('ready', () => {
          if (connectedBefore) this.catchUp();
          connectedBefore = true;
        });
        this.redisClients.push(client);
        return client;
      };
      // Hocuspocus calls some hooks without awaiting them (onChange, onAwarenessUpdate,
      // beforeBroadcastStateless), and the extension publishes to Redis in them: with Redis gone a
      // publish rejects, unhandled, and Node ends the process. Lost publishes are what the catch-up
      // after a reconnection is for (catchUp), so they are only logged. Likewise a document
      // unloaded once the subscriber's connection has closed (at shutdown, after the extension's
      // delay) is unsubscribed by a command ioredis both calls back and rejects; a closed
      // subscriber holds no subscription.
      const { log } = this.options;
      const quietly = <T>(work: Promise<T>): Promise<T | undefined> =>
        work.catch((error: unknown) => {
          log.debug({ err: error }, 'collab: a Redis publish failed');
          return undefined;
        });
      type Hook<K extends keyof InstanceType<typeof RedisExtension>> = Parameters<
        // biome-ignore lint/suspicious/noExplicitAny: only the hook's parameter is taken
        InstanceType<typeof RedisExtension>[K] extends (...args: any) => any
          ? InstanceType<typeof RedisExtension>[K]
          : never
      >[0];
      const Extension = class extends RedisExtension {
        override async onChange(data: Hook<'onChange'>) {
          await quietly(super.onChange(data));
        }
        override async onAwarenessUpdate(data: Hook<'onAwarenessUpdate'>) {
          return quietly(super.onAwarenessUpdate(data));
        }
        override async beforeBroadcastStateless(data: Hook<'beforeBroadcastStateless'>) {
          return (await quietly(super.beforeBroadcastStateless(data))) ?? 0;
        }
        override async afterUnloadDocument(data: Hook<'afterUnloadDocument'>) {
          if ((this.sub as { status?: string }).status !== 'ready') return;
          await super.afterUnloadDocument(data);
        }
      };
      // biome-ignore lint/suspicious/noExplicitAny: the extension is typed against its own ioredis (5), ours is 6
      this.redisExtension = new Extension({ createClient: create as any, prefix: `${redis.prefix}collab` });
      extensions.push(this.redisExtension);
      this.claimClient = create();
    }
    this.hocuspocus = new Hocuspocus({
      quiet: true,
      debounce: this.options.storeDebounceMs ?? 1000,
      maxDebounce: Math.max(5000, this.options.storeDebounceMs ?? 0),
      extensions,
      onAuthenticate: (data) => this.onAuthenticate(data),
      connected: async ({ context, connection, documentName }) => {
        this.guard.admitted(connection.webSocket, documentName);
        connection.onClose(() => this.guard.left(connection.webSocket, documentName));
        this.established(context as Context);
      },
      beforeHandleMessage: async ({ update, document, connection, context }) => {
        // Stateless messages are the server's own (a role change, roleMessage): one a client asked
        // Hocuspocus to send on would reach every other editor as if from the server (a viewer
        // could turn everyone's editor read-only). The connection is closed instead.
        if (messageTypeOf(update) === BROADCAST_STATELESS) throw Object.assign(new Error('Forbidden'), FORBIDDEN);
        applyVouched(document.awareness, update, (context as Context).username, connection.webSocket);
      },
      onLoadDocument: ({ document, documentName, context }) => this.load(document, documentName, context as Context),
      onChange: async ({ documentName, transactionOrigin }) => this.changed(documentName, transactionOrigin),
      onStoreDocument: async ({ document, documentName }) => this.store(document, documentName),
      onDisconnect: async ({ documentName, clientsCount }) => {
        if (clientsCount > 0) return;
        const document = this.hocuspocus.documents.get(documentName);
        this.enqueue(documentName, () => this.writeSessionVersion(documentName, document));
      },
      afterUnloadDocument: async ({ documentName }) => {
        clearTimeout(this.catchUpRetries.get(documentName)?.timer);
        this.catchUpRetries.delete(documentName);
        const session = this.sessions.get(documentName);
        if (session === undefined) return;
        if (session.idle !== undefined) clearTimeout(session.idle);
        this.sessions.delete(documentName);
        // Its queued work (the version of the last person leaving) still runs.
        this.unloaded.set(documentName, session);
        void session.queue.finally(() => {
          if (this.unloaded.get(documentName) === session) this.unloaded.delete(documentName);
        });
      },
    });
    if (bus !== undefined && bus.kind !== 'local') {
      this.unsubscribeGap = bus.onGap(() => this.catchUp());
      this.unsubscribe = bus.subscribe((message) => {
        if ('recheck' in message) {
          this.recheckUser(message.recheck);
          return;
        }
        const version = typeof message.data.version === 'number' ? message.data.version : undefined;
        this.handle({ type: message.type, noteId: message.data.id, version, live: message.live === true });
      });
    }
  }

  /** Takes an HTTP upgrade for /api/collab; false for any other path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/api/collab') return false;
    if (this.closed) {
      socket.destroy();
      return true;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      this.guard.watch(ws);
      this.hocuspocus.handleConnection(ws, request);
    });
    return true;
  }

  get documentCount(): number {
    return this.hocuspocus.getDocumentsCount();
  }

  /** Whether every connection of this user to the note on this instance is read-only (tests). */
  isReadOnly(noteId: string, userId: string): boolean {
    const connections = (this.hocuspocus.documents.get(noteId)?.getConnections() ?? []).filter(
      (connection) => (connection.context as Context | undefined)?.userId === userId,
    );
    return connections.length > 0 && connections.every((connection) => connection.readOnly);
  }

  get connectionCount(): number {
    return this.hocuspocus.getConnectionsCount();
  }

  // --- EffectSink: committed changes on this instance (db/effects.ts).

  readonly listening = false;

  noteChanged(change: NoteChange): void {
    // With a bus that reaches the other instances, changes come back from it (this instance's too).
    if (this.options.bus !== undefined && this.options.bus.kind !== 'local') return;
    this.handle({ type: change.type, noteId: change.noteId, version: change.version, live: change.live === true });
  }

  /** Someone's credentials changed (a session ended): their connections are checked again. */
  credentialsRevoked(userId: string): void {
    if (this.options.bus !== undefined && this.options.bus.kind !== 'local') return;
    this.recheckUser(userId);
  }

  private handle(change: { type: NoteChange['type']; noteId: string; version?: number; live: boolean }): void {
    const { type, noteId } = change;
    if (!this.hocuspocus.documents.has(noteId)) return;
    if (type === 'note.updated' && change.version !== undefined && !change.live) {
      const version = change.version;
      this.enqueue(noteId, async () => {
        if (await this.claim(noteId, version)) await this.takeIn(noteId, version);
      });
    } else if (type === 'share.changed' || type === 'note.trashed' || type === 'note.deleted') {
      void this.recheckNote(noteId);
    }
  }

  /** With Redis one instance applies a save to the shared document; without, each its own. */
  private async claim(noteId: string, version: number): Promise<boolean> {
    if (this.claimClient === undefined) return true;
    const key = `${this.options.redis!.prefix}collab:applied:${noteId}:${version}`;
    try {
      return (await this.claimClient.set(key, '1', 'EX', 600, 'NX')) === 'OK';
    } catch {
      return true;
    }
  }

  // --- Hooks.

  private async onAuthenticate(data: {
    token: string;
    documentName: string;
    connectionConfig: { readOnly: boolean };
  }): Promise<Context> {
    const found = data.token === '' ? undefined : await this.options.authenticate(data.token);
    if (found === undefined) throw new Error('Unauthorized');
    if (!isUuid(data.documentName)) throw new Error('Forbidden');
    const noteId = data.documentName.toLowerCase();
    if (noteId !== data.documentName) throw new Error('Forbidden');
    const role = await noteRole(this.options.db, found.userId, noteId);
    if (role === undefined || role.role === null) throw new Error('Forbidden');
    const admission = this.admit(found.userId);
    data.connectionConfig.readOnly = role.role === 'viewer';
    return {
      userId: found.userId,
      username: found.username,
      role: role.role,
      ownerId: role.ownerId,
      stillValid: found.stillValid,
      admission,
    };
  }

  /**
   * Counts one more connection of the account towards its cap, or refuses it (Hocuspocus sends
   * the reason to the client as its authentication failure). Counted from now, so that many
   * connections opened at once cannot all pass before the first is established.
   */
  private admit(userId: string): { expires: number } {
    const now = Date.now();
    const admitting = this.admitting.get(userId) ?? new Set();
    for (const entry of admitting) if (entry.expires <= now) admitting.delete(entry);
    let open = admitting.size;
    for (const document of this.hocuspocus.documents.values())
      for (const connection of document.getConnections())
        if ((connection.context as Context | undefined)?.userId === userId) open += 1;
    if (open >= (this.options.perUser ?? COLLAB_CONNECTIONS_PER_USER)) {
      this.options.log.info({ userId }, 'collab: a connection over the per-account cap was refused');
      throw Object.assign(new Error(TOO_MANY_CONNECTIONS), { reason: TOO_MANY_CONNECTIONS });
    }
    const entry = { expires: now + ADMISSION_MS };
    admitting.add(entry);
    this.admitting.set(userId, admitting);
    return entry;
  }

  /** The connection is established: it counts as one of the document's connections from now on. */
  private established(context: Context): void {
    const admitting = this.admitting.get(context.userId);
    if (admitting === undefined || context.admission === undefined) return;
    admitting.delete(context.admission);
    if (admitting.size === 0) this.admitting.delete(context.userId);
    context.admission = undefined;
  }

  private async load(document: Document, noteId: string, context: Context): Promise<void> {
    const { db } = this.options;
    // A document unloaded a moment ago may still be writing its version: this one waits for it.
    const previous = this.unloaded.get(noteId)?.queue;
    if (previous !== undefined) await previous;
    this.sessions.set(noteId, { ownerId: context.ownerId, queue: Promise.resolve() });
    const note = await getNote(db, context.ownerId, noteId);
    let state = await repo.loadState(db, noteId);
    if (state === undefined) {
      const seed = new Y.Doc();
      seed.getText('title').insert(0, note.title);
      seed.getText('content').insert(0, note.content);
      seed.getMap(META).set('version', note.version);
      state = await repo.seedState(db, noteId, Y.encodeStateAsUpdate(seed));
      seed.destroy();
    }
    if (state !== undefined) Y.applyUpdate(document, state, SERVER);
    // Whoever typed is an author of the next version, recorded as their typing is applied: the
    // onChange hook runs some microtasks later, and a version written in between would carry the
    // text without its author.
    document.on('afterTransaction', (transaction: Y.Transaction) => this.recordAuthor(document, transaction));
    // Saved while nobody had it open: the newer version is taken in.
    const taken = document.getMap(META).get('version');
    if (typeof taken === 'number' && taken < note.version) await this.takeIn(noteId, note.version, document);
  }

  /** Typing through a connection of this instance (the transaction's origin): its account is an author. */
  private recordAuthor(document: Document, transaction: Y.Transaction): void {
    const origin = transaction.origin as { context?: Partial<Context> } | null | string | undefined;
    if (origin === null || typeof origin !== 'object' || transaction.changed.size === 0) return;
    const userId = origin.context?.userId;
    if (userId === undefined) return;
    const meta = document.getMap(META);
    const key = `author:${userId}`;
    // Typing while a version is being written (the key marked as that write's) counts for the next
    // version: the mark is replaced, so the write's end does not take the key away with it.
    if (!meta.has(key) || writingMark(meta.get(key)) !== undefined)
      document.transact(() => meta.set(key, Date.now() * 1000 + meta.size), SERVER);
  }

  private changed(noteId: string, origin: unknown): void {
    if (origin === SERVER) return;
    const session = this.sessions.get(noteId);
    if (session === undefined) return;
    if (session.idle !== undefined) clearTimeout(session.idle);
    session.idle = setTimeout(() => {
      session.idle = undefined;
      this.enqueue(noteId, () => this.writeSessionVersion(noteId));
    }, this.options.idleMs);
    session.idle.unref();
  }

  private async store(document: Document, noteId: string): Promise<void> {
    if (this.destroyed) return;
    try {
      await repo.saveState(this.options.db, noteId, Y.encodeStateAsUpdate(document));
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error; // the note was deleted meanwhile
    }
  }

  private enqueue(noteId: string, work: () => Promise<void>): void {
    const session = this.sessions.get(noteId) ?? this.unloaded.get(noteId);
    if (session === undefined) return;
    session.queue = session.queue
      .then(work)
      .catch((error: unknown) => this.options.log.warn({ err: error, noteId }, 'collab: a live document step failed'));
  }

  /** Saved elsewhere (API, WebDAV, a restore): the new version reaches the live document as an edit. */
  private async takeIn(noteId: string, version: number, loading?: Document): Promise<void> {
    const document = loading ?? this.hocuspocus.documents.get(noteId);
    const session = this.sessions.get(noteId);
    if (document === undefined || session === undefined) return;
    const meta = document.getMap(META);
    const taken = meta.get('version');
    if (typeof taken === 'number' && taken >= version) return;
    const { db } = this.options;
    const title = document.getText('title');
    const content = document.getText('content');
    // A version written from this document whose number its stored state does not hold (the
    // instance stopped between the two, or another instance's store landed last) is the base: taken
    // from the older one, its text would be merged in a second time, and Yjs keeps both copies.
    const same =
      typeof taken === 'number'
        ? await repo.newestVersionWithText(
            db,
            noteId,
            { after: taken, upTo: version, limit: 10 },
            { title: title.toString(), content: content.toString() },
          )
        : undefined;
    const from = same ?? taken;
    const saved = await findVersionByNumber(db, session.ownerId, noteId, version);
    if (saved === undefined) return;
    const base = typeof from === 'number' ? await findVersionByNumber(db, session.ownerId, noteId, from) : undefined;
    const liveTitle = title.toString();
    const liveContent = content.toString();
    // What the save changed (from the version the document last took in) is applied where the
    // people typing have not changed the same characters; where they have, the live text stays
    // (the save stays in history) — nothing typed is lost. Without that version (pruned): a diff.
    const edits = (text: Y.Text, live: string, from: string | undefined, to: string) =>
      from === undefined ? applyDiff(text, live, to) : applyEdits(text, threeWay(from, live, to));
    document.transact(() => {
      edits(title, liveTitle, base?.title, saved.title);
      edits(content, liveContent, base?.content, saved.content);
      meta.set('version', version);
    }, SERVER);
    if (loading === undefined) await this.store(document, noteId);
  }

  /** Those of `userIds` who may write the note (its owner and editors), in the order given. */
  private async mayWrite(noteId: string, userIds: string[]): Promise<string[]> {
    const candidates = userIds.filter(isUuid);
    const roles = await Promise.all(candidates.map((id) => noteRole(this.options.db, id, noteId)));
    return candidates.filter((_, i) => roles[i]?.role === 'owner' || roles[i]?.role === 'editor');
  }

  /** The live text as a version (idle, or the last person left), if it differs from the note's. */
  private async writeSessionVersion(noteId: string, unloading?: Document): Promise<void> {
    const document = unloading ?? this.hocuspocus.documents.get(noteId);
    const session = this.sessions.get(noteId) ?? this.unloaded.get(noteId);
    if (document === undefined || session === undefined) return;
    const { db, log } = this.options;
    const meta = document.getMap(META);
    const title = versionTitle(document.getText('title').toString());
    const content = document.getText('content').toString();
    const authorKeys = [...meta.keys()].filter((key) => key.startsWith('author:'));
    const authors = authorKeys
      .sort((a, b) => authorOrder(meta.get(a)) - authorOrder(meta.get(b)))
      .map((key) => key.slice('author:'.length));
    // The authors of this version are marked as its own (on every instance: the map is shared), and
    // only keys still so marked are removed when it is written; see recordAuthor.
    const mark = `${Date.now()}-${Math.random()}`;
    document.transact(() => {
      for (const key of authorKeys) meta.set(key, { order: authorOrder(meta.get(key)), writing: mark });
    }, SERVER);
    await this.options.checkpoint?.('collab:version');
    let note: Awaited<ReturnType<typeof getNote>>;
    try {
      note = await getNote(db, session.ownerId, noteId);
    } catch (error) {
      if (error instanceof AppError && error.status === 404) return this.closeAll(noteId);
      throw error;
    }
    const forget = async (version: number) => {
      document.transact(() => {
        for (const key of authorKeys) if (writingMark(meta.get(key)) === mark) meta.delete(key);
        if ((meta.get('version') as number | undefined) !== version) meta.set('version', version);
      }, SERVER);
      await this.store(document, noteId);
    };
    if (note.title === title && note.content === content) {
      await forget(note.version);
      return;
    }
    try {
      checkText(content);
    } catch {
      log.warn({ noteId }, 'collab: the live text is larger than a note may be; no version written');
      return;
    }

    // Only accounts that may write the note now are its authors. The map is the document's, which a
    // client can write into: an id that is no account's (on PostgreSQL, one that is not even a UUID
    // failed every later version) or a stranger's is left out, as is an account deleted meanwhile.
    const writers = await this.mayWrite(noteId, authors);
    if (writers.length === 0) writers.push(session.ownerId);
    try {
      const written = await writeVersion(
        db,
        session.ownerId,
        noteId,
        { title, content },
        [note.version],
        null,
        writers[0],
        writers,
        true,
        this.options.checkpoint,
      );
      await this.options.checkpoint?.('collab:version-written');
      await forget(written.version);
    } catch (error) {
      // Saved by someone else (or another instance) meanwhile: that save is being taken in; the
      // live text is written at the next quiet moment.
      if (error instanceof AppError && error.status === 412) {
        this.changed(noteId, `${SERVER}-retry`);
        return;
      }
      throw error;
    }
  }

  // --- Access ending.

  private async recheckNote(noteId: string): Promise<void> {
    const document = this.hocuspocus.documents.get(noteId);
    if (document === undefined) return;
    for (const connection of document.getConnections()) await this.recheckConnection(noteId, connection);
  }

  private recheckUser(userId: string): void {
    for (const [noteId, document] of this.hocuspocus.documents)
      for (const connection of document.getConnections())
        if ((connection.context as Context | undefined)?.userId === userId)
          void this.recheckConnection(noteId, connection, true);
  }

  private async recheckConnection(
    noteId: string,
    connection: Connection,
    credentials = false,
    rethrow = false,
  ): Promise<void> {
    const context = connection.context as Context | undefined;
    if (context?.userId === undefined) return;
    try {
      if (credentials && !(await context.stillValid())) {
        connection.close({ code: 4401, reason: 'Unauthorized' });
        return;
      }
      const check = (context.checks ?? 0) + 1;
      context.checks = check;
      const role = await noteRole(this.options.db, context.userId, noteId);
      // Two changes in quick succession (made viewer, then editor again): an answer older than one
      // already applied is dropped; one that failed leaves the others to decide.
      if (check < (context.applied ?? 0)) return;
      context.applied = check;
      if (role === undefined || role.role === null) connection.close(FORBIDDEN);
      else {
        context.role = role.role;
        const readOnly = role.role === 'viewer';
        if (connection.readOnly === readOnly) return;
        connection.readOnly = readOnly;
        // The client is told, so that its editor stops (or starts again) taking typing at once
        // instead of typing into a document the server now drops (docs/api.md, "Role changes while connected").
        connection.sendStateless(roleMessage(role.role));
      }
    } catch (error) {
      if (rethrow) throw error;
      this.options.log.warn({ err: error, noteId }, 'collab: access check failed');
    }
  }

  /**
   * Messages between instances may have been lost (the bus or Redis was away and is back): the
   * access changes, saves and signals announced meanwhile were never heard. Every connection is
   * checked again (credentials and role), every document takes in the note's current version, and
   * with Redis each document asks the other instances for what its copy lacks (and offers its own).
   * Several channels may come back at once: one catch-up for them.
   */
  private catchUpScheduled = false;
  /** A document's next catch-up attempt, while one waits. */
  private readonly catchUpRetries = new Map<string, { timer: NodeJS.Timeout; claimed: number | undefined }>();
  catchUp(): void {
    if (this.closed || this.catchUpScheduled) return;
    this.catchUpScheduled = true;
    setImmediate(() => {
      this.catchUpScheduled = false;
      if (this.closed) return;
      this.options.log.info(
        { documents: this.hocuspocus.getDocumentsCount() },
        'collab: messages between instances may have been missed; checking every live document again',
      );
      for (const [noteId, document] of this.hocuspocus.documents) {
        this.catchUpDocument(noteId, 0);
        void this.redisExtension
          ?.onChange?.({ documentName: noteId, document, transactionOrigin: SERVER } as Parameters<
            NonNullable<Extension['onChange']>
          >[0])
          .catch((error: unknown) => this.options.log.warn({ err: error, noteId }, 'collab: Redis re-sync failed'));
      }
    });
  }

  /**
   * One document's catch-up: its connections checked again, then the note's current version taken
   * in. The database may be coming back from the same network trouble (a connection of the pool
   * that lost bytes answers only with a time-out): a failed step is tried again, a few times.
   */
  private catchUpDocument(noteId: string, attempt: number, claimed?: number): void {
    // One catch-up per document: a new gap while one waits to try again starts it afresh now,
    // keeping its claim (the claim is this instance's, and asked again it would be refused).
    const waiting = this.catchUpRetries.get(noteId);
    if (waiting !== undefined) {
      clearTimeout(waiting.timer);
      claimed ??= waiting.claimed;
      this.catchUpRetries.delete(noteId);
    }
    this.enqueue(noteId, async () => {
      const document = this.hocuspocus.documents.get(noteId);
      const session = this.sessions.get(noteId);
      if (this.closed || document === undefined || session === undefined) return;
      try {
        for (const connection of document.getConnections())
          await this.recheckConnection(noteId, connection, true, true);
        let version: number;
        try {
          version = (await getNote(this.options.db, session.ownerId, noteId)).version;
        } catch (error) {
          if (error instanceof AppError && error.status === 404) return this.closeAll(noteId);
          throw error;
        }
        // With Redis one instance applies it; the claim, once made, holds for the next attempts.
        if (claimed === version || (await this.claim(noteId, version))) {
          claimed = version;
          await this.takeIn(noteId, version);
        }
      } catch (error) {
        const level = attempt >= CATCH_UP_QUIET_RETRIES ? 'warn' : 'info';
        this.options.log[level]({ err: error, noteId, attempt }, 'collab: catching up failed; trying again');
        const wait = Math.min(CATCH_UP_RETRY_MS * 2 ** attempt, CATCH_UP_RETRY_MAX_MS);
        if (this.closed || !this.hocuspocus.documents.has(noteId)) return;
        clearTimeout(this.catchUpRetries.get(noteId)?.timer);
        const timer = setTimeout(() => {
          this.catchUpRetries.delete(noteId);
          this.catchUpDocument(noteId, attempt + 1, claimed);
        }, wait);
        timer.unref();
        this.catchUpRetries.set(noteId, { timer, claimed });
      }
    });
  }

  private closeAll(noteId: string): void {
    const document = this.hocuspocus.documents.get(noteId);
    for (const connection of document?.getConnections() ?? []) connection.close(FORBIDDEN);
  }

  /** Before the server closes: every connection ended, every document stored and written as a version. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const retry of this.catchUpRetries.values()) clearTimeout(retry.timer);
    this.catchUpRetries.clear();
    this.unsubscribe?.();
    this.unsubscribeGap?.();
    for (const [noteId, document] of this.hocuspocus.documents) {
      this.enqueue(noteId, () => this.store(document, noteId));
      await this.sessions.get(noteId)?.queue;
    }
    this.hocuspocus.closeConnections();
    for (const client of this.wss.clients) client.terminate();
    // Unloaded now (each stored once more), not after the database has closed.
    for (const document of [...this.hocuspocus.documents.values()]) await this.hocuspocus.unloadDocument(document);
    // Documents unloaded just before (the last person left) may still be writing their version
    // and storing the state that names it: done before the database may close.
    await this.options.checkpoint?.('collab:close-waits');
    await Promise.all([...this.sessions.values(), ...this.unloaded.values()].map((s) => s.queue));
    // Extensions let go of what they hold (the Redis extension its connections and locks). A Redis
    // that does not answer would hold its QUIT for ever: after a moment the connections are cut.
    await Promise.race([
      this.hocuspocus.hooks('onDestroy', { instance: this.hocuspocus }).catch((error: unknown) => {
        this.options.log.warn({ err: error }, 'collab: closing the Redis extension failed');
      }),
      new Promise((resolve) => setTimeout(resolve, REDIS_QUIT_MS).unref()),
    ]);
    this.destroyed = true;
    for (const client of this.redisClients) client.disconnect();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/** Turns `text` (whose content is `from`) into `to` by deletes and inserts where they differ: cursors elsewhere stay. */
export function applyDiff(text: Y.Text, from: string, to: string): void {
  if (from === to) return;
  let index = 0;
  for (const [op, part] of diff(from, to)) {
    if (op === diff.EQUAL) index += part.length;
    else if (op === diff.DELETE) text.delete(index, part.length);
    else {
      text.insert(index, part);
      index += part.length;
    }
  }
}

/** A change to the live text: at `at`, `remove` characters deleted and `insert` inserted. */
export interface LiveEdit {
  at: number;
  remove: number;
  insert: string;
}

/**
 * The edits that bring `base` → `saved` onto `live` (which also started from `base`), by
 * characters: each change of the save whose base range the live text left as it was, at its place
 * in the live text; a change overlapping what the live text changed is left out (the live text
 * wins there). In descending order of position, so each applies without moving the next.
 */
export function threeWay(base: string, live: string, saved: string): LiveEdit[] {
  // Base ranges the live text changed, and where base's unchanged stretches are in the live text.
  const changed: { from: number; to: number }[] = [];
  const kept: { from: number; to: number; at: number }[] = [];
  // The live text's changes as whole hunks (a deletion and the insertion after it together): a
  // saved hunk that is exactly one of them is already there (a client that saved the text it saw
  // live, others' typing included), and applied again it would double.
  const liveHunks = new Set<string>();
  let liveHunk: { from: number; to: number; insert: string } | undefined;
  const endLiveHunk = () => {
    if (liveHunk !== undefined) liveHunks.add(`${liveHunk.from}:${liveHunk.to}:${liveHunk.insert}`);
    liveHunk = undefined;
  };
  let b = 0;
  let l = 0;
  for (const [op, part] of diff(base, live)) {
    if (op === diff.EQUAL) {
      endLiveHunk();
      kept.push({ from: b, to: b + part.length, at: l });
      b += part.length;
      l += part.length;
      continue;
    }
    liveHunk ??= { from: b, to: b, insert: '' };
    if (op === diff.DELETE) {
      changed.push({ from: b, to: b + part.length });
      b += part.length;
      liveHunk.to = b;
    } else {
      changed.push({ from: b, to: b });
      l += part.length;
      liveHunk.insert += part;
    }
  }
  endLiveHunk();
  const place = (offset: number): number | undefined => {
    // The last unchanged stretch holding the offset: after anything the live text inserted there.
    for (let i = kept.length - 1; i >= 0; i -= 1) {
      const k = kept[i]!;
      if (k.from <= offset && offset <= k.to) return k.at + offset - k.from;
    }
    return offset === 0 ? 0 : offset === base.length ? live.length : undefined;
  };
  const overlaps = (from: number, to: number) =>
    changed.some((c) =>
      c.from === c.to
        ? from < c.from && c.from < to
        : from === to
          ? c.from < from && from < c.to
          : c.from < to && from < c.to,
    );
  const edits: LiveEdit[] = [];
  let o = 0;
  let hunk: { from: number; to: number; insert: string } | undefined;
  const flush = () => {
    if (hunk === undefined) return;
    if (liveHunks.has(`${hunk.from}:${hunk.to}:${hunk.insert}`)) {
      hunk = undefined;
      return;
    }
    const at = place(hunk.from);
    const end = place(hunk.to);
    if (!overlaps(hunk.from, hunk.to) && at !== undefined && end !== undefined && end >= at)
      edits.push({ at, remove: end - at, insert: hunk.insert });
    hunk = undefined;
  };
  for (const [op, part] of diff(base, saved)) {
    if (op === diff.EQUAL) {
      flush();
      o += part.length;
    } else {
      hunk ??= { from: o, to: o, insert: '' };
      if (op === diff.DELETE) {
        o += part.length;
        hunk.to = o;
      } else hunk.insert += part;
    }
  }
  flush();
  return edits.sort((x, y) => y.at - x.at);
}

function applyEdits(text: Y.Text, edits: readonly LiveEdit[]): void {
  for (const edit of edits) {
    if (edit.remove > 0) text.delete(edit.at, edit.remove);
    if (edit.insert !== '') text.insert(edit.at, edit.insert);
  }
}
