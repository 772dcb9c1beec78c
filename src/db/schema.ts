import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';

/**
 * Row types of every table, as rows leave the dialect boundary (database.ts): timestamps are the
 * app's ISO-8601 strings with milliseconds, booleans are booleans, and note titles and contents are
 * strings — stored as UTF-8 bytes (bytea/blob) so that NUL survives, so they are written as Buffers.
 */
type Timestamp = string;
type Utf8 = ColumnType<string, Buffer, Buffer>;

export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  is_admin: boolean;
  /** Bumped whenever every session of the user ends; a login in flight checks it before storing its token. */
  session_generation: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** An administrator disabled the account: no login, its sessions ended, no token of it works. */
  disabled: ColumnType<boolean, boolean | undefined, boolean>;
  last_login_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** Attachment bytes this account may keep; null: STORAGE_QUOTA_BYTES, 0: unlimited. */
  storage_quota_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  /** A verified address, lower-cased; null until one is confirmed. */
  email: ColumnType<string | null, string | null | undefined, string | null>;
  /** When an administrator last enabled the account again: access tokens issued before it are dead. */
  reenabled_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
}

/** Single-use sign-up links an administrator made (invitations/). */
export interface InvitationsTable {
  id: string;
  /** Lowercase hex SHA-256 of the token; the token is shown once, at creation. */
  token_hash: string;
  email: string | null;
  admin: boolean;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  used_by: string | null;
}

/** Single-use links where an account an administrator made chooses its password (accounts/). */
export interface AccountSetupsTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** Single sign-on: the account an OpenID Connect provider's issuer + subject signs in to. */
export interface OidcIdentitiesTable {
  id: string;
  user_id: string;
  issuer: string;
  subject: string;
  created_at: Timestamp;
  last_login_at: Timestamp | null;
}

/** Single-use links sent or handed to a person: only the SHA-256 of the token is kept. */
export interface AccountLinksTable {
  id: string;
  user_id: string;
  purpose: 'password_reset' | 'email_confirm';
  token_hash: string;
  /** The address being confirmed (email_confirm). */
  email: string | null;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: Timestamp;
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
  revoked: boolean;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  user_agent: string | null;
  ip_address: string | null;
  /** The jti of the access token issued with this refresh token (null before 2026-11-26). */
  access_jti: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface NotesTable {
  id: string;
  owner_id: string;
  /** Title of the current version, kept here so that lists never touch the history. */
  title: Utf8;
  version: number;
  version_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set while the note is in the trash; every notes route then treats it as missing. */
  deleted_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** Versions deleted by history retention (or absent from an import), so history has gaps when > 0. */
  pruned: ColumnType<number, number | undefined, number>;
  /** The folder the note is filed in; null is the top level (also once its folder is deleted). */
  folder_id: ColumnType<string | null, string | null | undefined, string | null>;
  pinned: ColumnType<boolean, boolean | undefined, boolean>;
  archived: ColumnType<boolean, boolean | undefined, boolean>;
  /** The current version's own tags, sorted, space-separated; null until derived (see tags.ts). */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The version whose text `tags` was derived from, and whether `note_tags` holds the note's rows
   * (only outside the trash). Written with them by every write of this build; a note where they
   * disagree with `version_id` and `deleted_at` was written by an older release, and the tags
   * back-fill finds it by the partial index notes_tags_unsettled (migration 2026-11-27-81-o).
   */
  tags_version_id: ColumnType<string | null, string | null | undefined, string | null>;
  tags_listed: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface FoldersTable {
  id: string;
  owner_id: string;
  parent_id: string | null;
  name: string;
  /** NFC, lower-cased: sibling names are unique ignoring case. */
  name_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Every tag a note outside the trash can be found by: its own and their parents (`a` for `a/b`). */
export interface NoteTagsTable {
  note_id: string;
  owner_id: string;
  tag: string;
}

export interface NoteVersionsTable {
  id: string;
  note_id: string;
  version: number;
  title: Utf8;
  content: Utf8;
  created_at: Timestamp;
  /** The version's name; a labelled version is never pruned. */
  label: ColumnType<string | null, string | null | undefined, string | null>;
  /** The version number this one was restored from. */
  restored_from: ColumnType<number | null, number | null | undefined, number | null>;
  /** Who wrote it (the owner or an editor); null once that account is deleted. */
  author_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A person a note is shared with: `role` is 'viewer' or 'editor'. */
export interface NoteMembersTable {
  note_id: string;
  user_id: string;
  role: 'viewer' | 'editor';
  created_at: Timestamp;
}

/** Append-only audit trail; user_id has no foreign key so that events outlive their user. */
export interface AuthEventsTable {
  /** Insertion order; never shown. */
  seq: Generated<number>;
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

/** One per user; `secret` is encrypted (mfa/secret-box.ts). */
export interface TotpFactorsTable {
  user_id: string;
  secret: string;
  /** Null until the first code was right: an unconfirmed factor is not asked for at login. */
  confirmed_at: Timestamp | null;
  /** The last accepted time step: a code for it or an earlier one is refused. */
  last_step: number | null;
  created_at: Timestamp;
}

export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  /** Lowercase hex SHA-256 of the normalised code. */
  code_hash: string;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url, as WebAuthn names the credential. */
  credential_id: string;
  /** base64url of the COSE public key. */
  public_key: string;
  counter: number;
  /** Comma-separated transports the authenticator reported. */
  transports: string | null;
  backed_up: boolean;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

/**
 * A challenge handed out and not yet used; `user_id` null for a passwordless login's. A
 * 'register_reauthenticated' challenge was asked for with the password again, so the passkey
 * that answers it can be added without it (a text column: no migration for the new value).
 */
export interface WebauthnChallengesTable {
  challenge: string;
  user_id: string | null;
  purpose: ChallengePurpose;
  expires_at: Timestamp;
}

export type ChallengePurpose = 'register' | 'register_reauthenticated' | 'login';

/** Each distinct content of a user once; `sha256` is 'pending:<storage_key>' while its upload runs. */
export interface AttachmentBlobsTable {
  owner_id: string;
  sha256: string;
  size: number;
  storage_key: string;
  created_at: Timestamp;
}

/** The bytes of a blob in ATTACHMENT_STORAGE=database, CHUNK_BYTES each (attachments/database-storage.ts). */
export interface AttachmentChunksTable {
  storage_key: string;
  seq: number;
  data: Buffer;
}

export interface AttachmentsTable {
  id: string;
  owner_id: string;
  sha256: string;
  filename: string;
  content_type: string;
  size: number;
  created_at: Timestamp;
}

/** A version that links to an attachment (its content holds /api/attachments/{id}). */
export interface AttachmentRefsTable {
  version_id: string;
  attachment_id: string;
}

/** A personal access token: its SHA-256 only; `scopes` comma-separated (tokens/scopes.ts). */
export interface AccessTokensTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  scopes: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

/** A share link of a note: `version` null shows the current version, a number pins one. */
export interface SharesTable {
  id: string;
  note_id: string;
  owner_id: string;
  token: string;
  version: number | null;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  views: Generated<number>;
}

/** A file other than a note, placed in a folder over WebDAV; its bytes are an attachment's. */
export interface DavFilesTable {
  id: string;
  owner_id: string;
  folder_id: string | null;
  name: string;
  /** NFC, lower-cased: names in a folder are unique ignoring case, as on the clients' disks. */
  name_key: string;
  attachment_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A WebDAV dead property: `value` is the XML of the property element as the client sent it. */
export interface DavPropertiesTable {
  owner_id: string;
  resource_id: string;
  namespace: string;
  name: string;
  value: string;
}

/** A WebDAV write lock on a path (decoded segments joined by `/`, '' for the top level). */
export interface DavLocksTable {
  token: string;
  owner_id: string;
  path: string;
  depth_infinity: boolean;
  exclusive: boolean;
  /** The client's DAV:owner element, as XML ('' when none). */
  lock_owner: string;
  timeout_seconds: number;
  expires_at: Timestamp;
}

/** A note's live co-editing document (src/collab): its Yjs state, kept so a restart loses nothing. */
export interface CollabDocumentsTable {
  note_id: string;
  /** Base64 of the Yjs update. */
  state: string;
  updated_at: Timestamp;
}

/** Everyone who wrote a version, in order (a live session's version has several); absent: its author_id alone. */
export interface NoteVersionAuthorsTable {
  version_id: string;
  position: number;
  user_id: string;
}

export interface Tables {
  users: UsersTable;
  oidc_identities: OidcIdentitiesTable;
  account_links: AccountLinksTable;
  refresh_tokens: RefreshTokensTable;
  notes: NotesTable;
  note_versions: NoteVersionsTable;
  auth_events: AuthEventsTable;
  folders: FoldersTable;
  note_tags: NoteTagsTable;
  totp_factors: TotpFactorsTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  attachment_blobs: AttachmentBlobsTable;
  attachment_chunks: AttachmentChunksTable;
  attachments: AttachmentsTable;
  attachment_refs: AttachmentRefsTable;
  access_tokens: AccessTokensTable;
  shares: SharesTable;
  dav_files: DavFilesTable;
  dav_properties: DavPropertiesTable;
  dav_locks: DavLocksTable;
  note_members: NoteMembersTable;
  invitations: InvitationsTable;
  account_setups: AccountSetupsTable;
  collab_documents: CollabDocumentsTable;
  note_version_authors: NoteVersionAuthorsTable;
}

export type Db = Kysely<Tables>;
/** A handle inside a transaction: for steps that must never run as separate statements. */
export type Trx = Transaction<Tables>;
