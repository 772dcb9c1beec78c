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
import { isUuid } from '../shared/ids.js';
import * as repo from './collab.repository.js';

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
 *   restart) takes the newer versions in by a three-way merge.
 * - Storing: on change, debounced (Hocuspocus), so a restart loses nothing acknowledged.
 * - Versions: after `idleMs` without a change, and when the last person on this instance leaves,
 *   the text is saved through the one save path (notes.service writeVersion: tags, references,
 *   search, events) with everyone who typed as `authors`; nothing is written when the text is the
 *   note's current one.
 * - Saves made elsewhere (API, WebDAV, a restore) reach the live document as an edit: the effects
 *   after their commit (db/effects.ts, or the bus across instances) diff the text and apply it as
 *   Y.Text deletes and inserts.
 * - Access ending (member removed or demoted, note trashed or deleted, session ended) closes the
 *   connections or makes them read-only.
 */

export interface CollabOptions {
  db: Db;
  log: FastifyBaseLogger;
  /** COLLAB_IDLE_SECONDS in ms. */
  idleMs: number;
  /** The user an access token belongs to while its session lives (never a personal token), or undefined. */
  authenticate: (token: string) => Promise<{ userId: string; stillValid: () => Promise<boolean> } | undefined>;
  /** The live events' bus: changes and signals from every instance (when it is not only this process). */
  bus?: EventBus;
  /** REDIS_URL: documents shared with the other instances through @hocuspocus/extension-redis. */
  redis?: { url: string; prefix: string };
  /** Hocuspocus' debounce for storing, in ms (tests shorten it). */
  storeDebounceMs?: number;
}

interface Context {
  userId: string;
  role: NoteRole;
  ownerId: string;
  stillValid: () => Promise<boolean>;
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

/** Close codes (Hocuspocus' own 4401/4403 conventions). */
const FORBIDDEN = { code: 4403, reason: 'Forbidden' };

/** How long closing waits for Redis to acknowledge QUIT before cutting the connections. */
const REDIS_QUIT_MS = 2_000;

export class Collab implements EffectSink {
  hocuspocus!: Hocuspocus;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  private readonly sessions = new Map<string, Session>();
  /** Documents unloaded whose queued work is still running. */
  private readonly unloaded = new Map<string, Session>();
  private unsubscribe?: () => void;
  private claimClient?: {
    set: (key: string, value: string, ex: 'EX', seconds: number, nx: 'NX') => Promise<unknown>;
    disconnect: () => void;
  };
  private closed = false;
  /** Every Redis connection made for the extension and the claims, cut at close whatever Redis does. */
  private readonly redisClients: Array<{ disconnect(): void }> = [];
  /** Closed and done: the database may be closed next, nothing more is stored. */
  private destroyed = false;

  constructor(private readonly options: CollabOptions) {}

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
        this.redisClients.push(client);
        return client;
      };
      // biome-ignore lint/suspicious/noExplicitAny: the extension is typed against its own ioredis (5), ours is 6
      extensions.push(new RedisExtension({ createClient: create as any, prefix: `${redis.prefix}collab` }));
      this.claimClient = create();
    }
    this.hocuspocus = new Hocuspocus({
      quiet: true,
      debounce: this.options.storeDebounceMs ?? 1000,
      maxDebounce: 5000,
      extensions,
      onAuthenticate: (data) => this.onAuthenticate(data),
      onLoadDocument: ({ document, documentName, context }) => this.load(document, documentName, context as Context),
      onChange: async ({ document, documentName, transactionOrigin, context }) =>
        this.changed(document, documentName, transactionOrigin, context as Context),
      onStoreDocument: async ({ document, documentName }) => this.store(document, documentName),
      onDisconnect: async ({ documentName, clientsCount }) => {
        if (clientsCount > 0) return;
        const document = this.hocuspocus.documents.get(documentName);
        this.enqueue(documentName, () => this.writeSessionVersion(documentName, document));
      },
      afterUnloadDocument: async ({ documentName }) => {
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
    this.wss.handleUpgrade(request, socket, head, (ws) => this.hocuspocus.handleConnection(ws, request));
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
    data.connectionConfig.readOnly = role.role === 'viewer';
    return { userId: found.userId, role: role.role, ownerId: role.ownerId, stillValid: found.stillValid };
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
    // Saved while nobody had it open: the newer version is taken in.
    const taken = document.getMap(META).get('version');
    if (typeof taken === 'number' && taken < note.version) await this.takeIn(noteId, note.version, document);
  }

  private changed(document: Document, noteId: string, origin: unknown, context: Context | undefined): void {
    if (origin === SERVER) return;
    // Someone's typing through a connection of this instance: they are an author of the next version.
    if (origin !== null && typeof origin === 'object' && context?.userId !== undefined) {
      const meta = document.getMap(META);
      const key = `author:${context.userId}`;
      if (!meta.has(key)) document.transact(() => meta.set(key, Date.now() * 1000 + meta.size), SERVER);
    }
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
    const saved = await findVersionByNumber(db, session.ownerId, noteId, version);
    if (saved === undefined) return;
    const base = typeof taken === 'number' ? await findVersionByNumber(db, session.ownerId, noteId, taken) : undefined;
    const title = document.getText('title');
    const content = document.getText('content');
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

  /** The live text as a version (idle, or the last person left), if it differs from the note's. */
  private async writeSessionVersion(noteId: string, unloading?: Document): Promise<void> {
    const document = unloading ?? this.hocuspocus.documents.get(noteId);
    const session = this.sessions.get(noteId) ?? this.unloaded.get(noteId);
    if (document === undefined || session === undefined) return;
    const { db, log } = this.options;
    const meta = document.getMap(META);
    const title = document.getText('title').toString();
    const content = document.getText('content').toString();
    const authorKeys = [...meta.keys()].filter((key) => key.startsWith('author:'));
    const authors = authorKeys
      .sort((a, b) => (meta.get(a) as number) - (meta.get(b) as number))
      .map((key) => key.slice('author:'.length));
    let note: Awaited<ReturnType<typeof getNote>>;
    try {
      note = await getNote(db, session.ownerId, noteId);
    } catch (error) {
      if (error instanceof AppError && error.status === 404) return this.closeAll(noteId);
      throw error;
    }
    const forget = async (version: number) => {
      document.transact(() => {
        for (const key of authorKeys) meta.delete(key);
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
    const writers = authors.length > 0 ? authors : [session.ownerId];
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
      );
      await forget(written.version);
    } catch (error) {
      // Saved by someone else (or another instance) meanwhile: that save is being taken in; the
      // live text is written at the next quiet moment.
      if (error instanceof AppError && error.status === 412) {
        this.changed(document, noteId, `${SERVER}-retry`, undefined);
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

  private async recheckConnection(noteId: string, connection: Connection, credentials = false): Promise<void> {
    const context = connection.context as Context | undefined;
    if (context?.userId === undefined) return;
    try {
      if (credentials && !(await context.stillValid())) {
        connection.close({ code: 4401, reason: 'Unauthorized' });
        return;
      }
      const role = await noteRole(this.options.db, context.userId, noteId);
      if (role === undefined || role.role === null) connection.close(FORBIDDEN);
      else {
        context.role = role.role;
        connection.readOnly = role.role === 'viewer';
      }
    } catch (error) {
      this.options.log.warn({ err: error, noteId }, 'collab: access check failed');
    }
  }

  private closeAll(noteId: string): void {
    const document = this.hocuspocus.documents.get(noteId);
    for (const connection of document?.getConnections() ?? []) connection.close(FORBIDDEN);
  }

  /** Before the server closes: every connection ended, every document stored and written as a version. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    for (const [noteId, document] of this.hocuspocus.documents) {
      this.enqueue(noteId, () => this.store(document, noteId));
      await this.sessions.get(noteId)?.queue;
    }
    this.hocuspocus.closeConnections();
    for (const client of this.wss.clients) client.terminate();
    // Unloaded now (each stored once more), not after the database has closed.
    for (const document of [...this.hocuspocus.documents.values()]) await this.hocuspocus.unloadDocument(document);
    await Promise.all([...this.sessions.values()].map((s) => s.queue));
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
  let b = 0;
  let l = 0;
  for (const [op, part] of diff(base, live)) {
    if (op === diff.EQUAL) {
      kept.push({ from: b, to: b + part.length, at: l });
      b += part.length;
      l += part.length;
    } else if (op === diff.DELETE) {
      changed.push({ from: b, to: b + part.length });
      b += part.length;
    } else {
      changed.push({ from: b, to: b });
      l += part.length;
    }
  }
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
