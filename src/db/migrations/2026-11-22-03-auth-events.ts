// Frozen once released: change the schema in a new file.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The audit trail of authentication: append-only, never a secret. user_id has no foreign key on
 * purpose: an account's history must outlive the account, so deleting a user keeps its events
 * (the username is stored alongside for the same reason).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const uuid = pg ? 'uuid' : 'text';
  const timestamp = pg ? 'timestamptz(3)' : 'text';

  await db.schema
    .createTable('auth_events')
    // seq orders the trail in insertion order, also within one millisecond and across instances
    // whose clocks differ; id is the public identifier.
    .addColumn('seq', pg ? 'bigint' : 'integer', (c) =>
      pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', uuid, (c) => c.notNull().unique())
    .addColumn('user_id', uuid)
    .addColumn('username', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('success', 'failure')`))
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('detail', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();
  // GET /auth/admin/events: newest first, optionally for one user or one kind.
  await sql`create index auth_events_user_seq on auth_events (user_id, seq desc)`.execute(db);
  await sql`create index auth_events_kind_seq on auth_events (kind, seq desc)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('auth_events').execute();
}
