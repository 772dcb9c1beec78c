import type { ColumnType, Generated, Kysely } from 'kysely';

/**
 * Row types of every table. Timestamps are written as ISO-8601 strings made by the app; PostgreSQL
 * reads them back as Date (timestamptz), SQLite as the same string (text). Booleans read back as
 * 0/1 on SQLite. Note titles and contents are UTF-8 bytes (bytea/blob) so that NUL survives.
 */
type Timestamp = ColumnType<Date | string, string, string>;
type NullableTimestamp = ColumnType<Date | string | null, string | null, string | null>;
type Bool = ColumnType<boolean | number, boolean, boolean>;

export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  is_admin: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RefreshTokensTable {
  id: string;
  user_id: string;
  /** The first token of a login; every rotation keeps it, so a whole session can be revoked. */
  family_id: string;
  /** The token this one was rotated from. */
  parent_id: string | null;
  /** Lowercase hex SHA-256 of the token string; the token itself is never stored. */
  token_hash: string;
  expires_at: Timestamp;
  revoked: Bool;
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
  user_agent: string | null;
  ip_address: string | null;
}

export interface NotesTable {
  id: string;
  owner_id: string;
  /** Title of the current version, kept here so that lists never touch the history. */
  title: Buffer;
  version: number;
  version_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set while the note is in the trash; every notes route then treats it as missing. */
  deleted_at: ColumnType<Date | string | null, string | null | undefined, string | null>;
}

export interface NoteVersionsTable {
  id: string;
  note_id: string;
  version: number;
  title: Buffer;
  content: Buffer;
  created_at: Timestamp;
}

/** Append-only audit trail; user_id has no foreign key so that events outlive their user. */
export interface AuthEventsTable {
  /** Insertion order (bigint arrives as a string from PostgreSQL); never shown. */
  seq: Generated<number | string>;
  id: string;
  user_id: string | null;
  username: string | null;
  kind: string;
  outcome: 'success' | 'failure';
  ip_address: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: Timestamp;
}

export interface Tables {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  notes: NotesTable;
  note_versions: NoteVersionsTable;
  auth_events: AuthEventsTable;
}

export type Db = Kysely<Tables>;
