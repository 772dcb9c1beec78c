// Frozen once released: change the schema in a new file.
import { sql, type Kysely } from 'kysely';
import { dialectTypes } from '../dialect-types.js';

/**
 * Second factors. `totp_factors`: one per user, the secret encrypted (mfa/secret-box.ts), confirmed
 * once a first code was right, and the last accepted time step, so that a code works once.
 * `recovery_codes`: SHA-256 of each code (they carry 120 random bits), used at most once.
 * `passkeys`: WebAuthn credentials with their public key and signature counter.
 * `webauthn_challenges`: each challenge handed out, deleted when used, so that it works once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const { uuid, timestamp, boolean, bigint, false: no } = dialectTypes(db);

  await db.schema
    .createTable('totp_factors')
    .addColumn('user_id', uuid, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('confirmed_at', timestamp)
    .addColumn('last_step', bigint)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();
  await sql`create unique index recovery_codes_user_hash on recovery_codes (user_id, code_hash)`.execute(db);

  await db.schema
    .createTable('passkeys')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', bigint, (c) => c.notNull())
    .addColumn('transports', 'text')
    .addColumn('backed_up', boolean, (c) => c.notNull().defaultTo(no))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('last_used_at', timestamp)
    .execute();
  await sql`create index passkeys_user on passkeys (user_id, created_at)`.execute(db);

  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('user_id', uuid, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .execute();
  await sql`create index webauthn_challenges_expiry on webauthn_challenges (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webauthn_challenges', 'passkeys', 'recovery_codes', 'totp_factors']) {
    await db.schema.dropTable(table).execute();
  }
}
