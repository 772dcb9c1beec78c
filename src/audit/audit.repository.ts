import type { Insertable, Selectable } from 'kysely';
import type { AuthEventsTable, Db } from '../db/schema.js';

export type AuthEventRow = Selectable<AuthEventsTable>;
export type NewAuthEvent = Omit<Insertable<AuthEventsTable>, 'seq'>;

/** Appends one event. The trail is append-only: only retention (deleteEventsBefore) removes rows. */
export async function recordEvent(db: Db, event: NewAuthEvent): Promise<void> {
  await db.insertInto('auth_events').values(event).execute();
}

export interface EventFilter {
  userId?: string | undefined;
  kind?: string | undefined;
}

/** Newest first, in insertion order (seq), so pages do not depend on clock resolution. */
export function listEvents(db: Db, filter: EventFilter, limit: number, offset: number): Promise<AuthEventRow[]> {
  let query = db.selectFrom('auth_events').selectAll();
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  return query.orderBy('seq', 'desc').limit(limit).offset(offset).execute();
}

/** Retention: deletes events recorded before `cutoff`; returns how many. */
export async function deleteEventsBefore(db: Db, cutoff: string): Promise<number> {
  const result = await db.deleteFrom('auth_events').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
