import { sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { inTransaction, UnitOfWork } from './effects.js';
import type { Db } from './schema.js';

/**
 * Write transactions of the notes' save path (create, save, restore, label, filing, trash).
 *
 * SQLite: group commit. On one connection every commit writes its pages to the WAL, and a save's
 * pages (the notes row, the version, the search index's b-trees) are mostly the same few pages as
 * the next save's, so writes that arrive together are written together in one transaction (a
 * failing one rolls back only itself and answers its own error, see commit()), and each caller is
 * answered only after that transaction has committed — the same durability, one commit. A batch
 * is what has arrived by the time the previous one committed (or, when idle, by the end of the
 * current turn of the event loop), bounded in count and bytes so that no caller waits behind an
 * unbounded queue. A write's `work` may run twice (again after a rollback), so it does nothing but
 * statements on `trx`.
 *
 * PostgreSQL: an ordinary transaction (its saves are one call each, notes/save.postgres.ts).
 * Inside a transaction the caller already owns, `work` simply runs in it.
 *
 * Either way each write is a unit of work (effects.ts): what it records is told once its batch has
 * committed, and never if it rolled back.
 */
export async function inWriteTransaction<T>(db: Db, work: (trx: Db) => Promise<T>, bytes = 0): Promise<T> {
  if (db.isTransaction) return work(db);
  if (isPostgres(db)) return inTransaction(db, work);
  return committerOf(db).enqueue(work, bytes);
}

/**
 * A write written two ways: on PostgreSQL `postgres`, one statement (a save there is one call of a
 * function, so one round trip), on SQLite `sqlite`, statements inside inWriteTransaction.
 */
export function writeWith<T>(
  db: Db,
  forms: { postgres: (db: Db) => Promise<T>; sqlite: (trx: Db) => Promise<T> },
  bytes = 0,
): Promise<T> {
  return isPostgres(db) ? forms.postgres(db) : inWriteTransaction(db, forms.sqlite, bytes);
}

/** At most this many writes, and about this many bytes of text, share one commit. */
export const BATCH_MAX_WRITES = 64;
export const BATCH_MAX_BYTES = 4 * 1024 * 1024;

/** Tests only: named steps `write.queued` (a write joined the queue) and `write.batch` (a batch starts). */
export type WriteCheckpoint = (step: 'write.queued' | 'write.batch') => Promise<void>;

interface Pending {
  work: (trx: Db) => Promise<unknown>;
  unit: UnitOfWork;
  bytes: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Outcome {
  ok: boolean;
  value: unknown;
}

class GroupCommitter {
  private queue: Pending[] = [];
  private running = false;
  checkpoint: WriteCheckpoint | undefined;

  constructor(private readonly db: Db) {}

  enqueue<T>(work: (trx: Db) => Promise<T>, bytes: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work,
        bytes,
        unit: new UnitOfWork(this.db),
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.running) {
        this.running = true;
        // After the current turn: writes parsed from the same burst of input join this batch.
        setImmediate(() => void this.drain());
      }
      void this.checkpoint?.('write.queued');
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.commit(this.take());
    } finally {
      this.running = false;
    }
  }

  private take(): Pending[] {
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && count < BATCH_MAX_WRITES) {
      bytes += this.queue[count]!.bytes;
      count += 1;
      if (bytes >= BATCH_MAX_BYTES) break;
    }
    return this.queue.splice(0, count);
  }

  private async commit(batch: Pending[]): Promise<void> {
    await this.checkpoint?.('write.batch');
    let outcomes: Outcome[];
    try {
      // One write alone: its failure rolls back the transaction, as it always did. Several: all in
      // one go first; should one fail, that rolled everything back, and they run again each in a
      // savepoint, so the failing one rolls back only itself. Savepoints on every write cost a
      // sixth of a save's time (BENCHMARKS.md, "Issue #28"), and failures are rare.
      // The writes of a batch run one after another, so the transaction is each one's in turn.
      outcomes =
        batch.length === 1
          ? [{ ok: true, value: await this.db.transaction().execute((trx) => run(trx, batch[0]!)) }]
          : await this.db
              .transaction()
              .execute(async (trx) => {
                const results: Outcome[] = [];
                for (const item of batch) results.push({ ok: true, value: await run(trx, item) });
                return results;
              })
              .catch(() =>
                this.db.transaction().execute(async (trx) => {
                  const results: Outcome[] = [];
                  for (const item of batch) results.push(await inSavepoint(trx, (t) => run(t, item)));
                  return results;
                }),
              );
    } catch (error) {
      // Nothing of this batch committed (a single write's own failure, or the commit itself).
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.unit.committed();
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
  }
}

/** One write of a batch, in `trx`: what it records is its own, and a run again starts afresh. */
function run(trx: Db, item: Pending): Promise<unknown> {
  item.unit.discard();
  item.unit.attach(trx);
  return item.work(trx);
}

async function inSavepoint(trx: Db, work: (trx: Db) => Promise<unknown>): Promise<Outcome> {
  await sql`savepoint write`.execute(trx);
  try {
    const value = await work(trx);
    await sql`release write`.execute(trx);
    return { ok: true, value };
  } catch (error) {
    try {
      await sql`rollback to write`.execute(trx);
      await sql`release write`.execute(trx);
    } catch {
      // SQLite ended the whole transaction (a full disk): the batch fails with the real error.
      throw error;
    }
    return { ok: false, value: error };
  }
}

const committers = new WeakMap<Db, GroupCommitter>();

function committerOf(db: Db): GroupCommitter {
  let committer = committers.get(db);
  if (committer === undefined) committers.set(db, (committer = new GroupCommitter(db)));
  return committer;
}

/** Tests only: pause or count the named steps of `db`'s group commit (SQLite). */
export function setWriteCheckpoint(db: Db, checkpoint: WriteCheckpoint | undefined): void {
  if (!isPostgres(db)) committerOf(db).checkpoint = checkpoint;
}
