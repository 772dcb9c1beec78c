import type { Db, Trx } from './schema.js';

/**
 * Side effects of a write, told only once it has committed: a service records them on the unit of
 * work it wrote in, and they reach the sinks (the live events' bus, wired in app.ts and the CLI)
 * after the commit — never when the transaction rolls back. Because the services record them, a
 * change tells the same whoever makes it: a route, WebDAV, an import, the trash purge, the CLI.
 *
 * The unit of work belongs to whoever opens the transaction (inTransaction here, or the group
 * commit of group-commit.ts); a service given a transaction records into it, a service given the
 * database handle itself writes its own transaction and records after it has committed.
 */

export const NOTE_CHANGE_TYPES = [
  'note.created',
  'note.updated',
  'note.filed',
  'note.trashed',
  'note.restored',
  'note.deleted',
  'share.changed',
] as const;
export type NoteChangeType = (typeof NOTE_CHANGE_TYPES)[number];

/** A note changed: who to tell is its owner and members, or `users` when the change removed what says so (a delete). */
export interface NoteChange {
  type: NoteChangeType;
  noteId: string;
  /** A new version: its number and who wrote it. */
  version?: number;
  authorId?: string;
  /** Read before a change that removes the note's owner and members. */
  users?: string[];
  /** Told as well: a member who just left. */
  alsoTell?: string[];
  /** The version was written from a live co-editing session (src/collab), which has its text already. */
  live?: boolean;
}

/** Where committed changes go. */
export interface EffectSink {
  /** Whether anyone could hear a change now (else a service need not read who to tell before a delete). */
  readonly listening: boolean;
  /** Called after the commit; returns at once, and never throws. */
  noteChanged(change: NoteChange): void;
}

const sinks = new WeakMap<Db, Set<EffectSink>>();

/** Sends the committed changes of writes on `db` to `sink` too; returns the removal. */
export function addEffectSink(db: Db, sink: EffectSink): () => void {
  let set = sinks.get(db);
  if (set === undefined) sinks.set(db, (set = new Set()));
  set.add(sink);
  return () => set.delete(sink);
}

/** Effects recorded in one transaction (or in one write of a group commit), held until it commits. */
export class UnitOfWork {
  private changes: NoteChange[] = [];

  constructor(private readonly root: Db) {}

  /** From now on what is recorded on `trx` is this unit's, until another unit takes the transaction over. */
  attach(trx: Db): void {
    units.set(trx, this);
  }

  /** Forgets what was recorded: the work rolled back (and may run again). */
  discard(): void {
    this.changes = [];
  }

  record(change: NoteChange): void {
    this.changes.push(change);
  }

  get listening(): boolean {
    return isListening(this.root);
  }

  /** After the commit: every recorded change to every sink, in the order recorded. */
  committed(): void {
    const changes = this.changes;
    this.changes = [];
    deliver(this.root, changes);
  }
}

const units = new WeakMap<Db, UnitOfWork>();

/** Handles that stand for another (one pooled connection of it, db.connection()): their sinks are its. */
const aliases = new WeakMap<Db, Db>();

/** What is written on `handle` (a single connection taken from `root`) is told as `root`'s writes are. */
export function sameEffectsAs(handle: Db, root: Db): void {
  aliases.set(handle, aliases.get(root) ?? root);
}

const rootOf = (db: Db): Db => aliases.get(db) ?? db;

function deliver(root: Db, changes: readonly NoteChange[]): void {
  if (changes.length === 0) return;
  for (const sink of sinks.get(rootOf(root)) ?? []) for (const change of changes) sink.noteChanged(change);
}

function isListening(root: Db): boolean {
  for (const sink of sinks.get(rootOf(root)) ?? []) if (sink.listening) return true;
  return false;
}

function unitOf(trx: Db): UnitOfWork {
  const unit = units.get(trx);
  // A transaction opened with db.transaction() directly has no unit: its effects would be lost.
  if (unit === undefined)
    throw new Error('effects: a change recorded in a transaction not opened by inTransaction or inWriteTransaction');
  return unit;
}

/**
 * Records that a note changed, on `db`: inside a transaction, told once it commits; on the database
 * handle (the write already committed), told now.
 */
export function noteChanged(db: Db, change: NoteChange): void {
  if (db.isTransaction) unitOf(db).record(change);
  else deliver(db, [change]);
}

/** Whether a change made on `db` would be heard by anyone (to skip reading who to tell). */
export function anyoneListening(db: Db): boolean {
  return db.isTransaction ? unitOf(db).listening : isListening(db);
}

/**
 * A transaction whose recorded effects are told after it commits (and dropped if it rolls back).
 * Inside a transaction the caller already owns, `work` simply runs in it, and its effects are the
 * caller's.
 */
export async function inTransaction<T>(db: Db, work: (trx: Trx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Trx);
  const unit = new UnitOfWork(db);
  const value = await db.transaction().execute((trx) => {
    unit.attach(trx);
    return work(trx);
  });
  unit.committed();
  return value;
}
