import type { Insertable, Selectable } from 'kysely';
import type { AuthEventsTable, Db } from '../db/schema.js';

export type AuthEventRow = Selectable<AuthEventsTable>;
export type NewAuthEvent = Omit<Insertable<AuthEventsTable>, 'seq'>;

/** Appends one event. The trail is append-only: only retention (deleteEventsBefore) removes rows. */
/**
 * An event without a username but with an account (an administrator's action, which names the
 * actor by id) gets the account's username as it is now, read in the same statement: the trail
 * says who acted, and still does once that account is renamed or deleted.
 */
export async function recordEvent(db: Db, event: NewAuthEvent): Promise<void> {
  const { user_id: userId } = event;
  await db
    .insertInto('auth_events')
    .values(
      event.username === null && userId !== null && userId !== undefined
        ? { ...event, username: (eb) => eb.selectFrom('users').select('username').where('id', '=', userId) }
        : event,
    )
    .execute();
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
