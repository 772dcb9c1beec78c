import type { Selectable } from 'kysely';
import { compiled } from '../db/compiled.js';
import type { Db, RefreshTokensTable } from '../db/schema.js';

/** A token as the session code reads it (access_jti is read only by the look-ups by access token below). */
export type RefreshTokenRow = Omit<Selectable<RefreshTokensTable>, 'access_jti'>;

export interface NewRefreshToken {
  id: string;
  user_id: string;
  family_id: string;
  parent_id: string | null;
  token_hash: string;
  expires_at: string;
  created_at: string;
  user_agent: string | null;
  ip_address: string | null;
  /** The jti of the access token issued with it. */
  access_jti?: string | null;
}

/** Named, not `*`: a prepared statement's result columns must not change under it (compiled.ts). */
const TOKEN_COLUMNS = [
  'id',
  'user_id',
  'family_id',
  'parent_id',
  'token_hash',
  'expires_at',
  'revoked',
  'revoked_at',
  'created_at',
  'user_agent',
  'ip_address',
] as const;

const insertQuery = compiled((db, p: NewRefreshToken) =>
  db.insertInto('refresh_tokens').values({
    id: p.id,
    user_id: p.user_id,
    family_id: p.family_id,
    parent_id: p.parent_id,
    token_hash: p.token_hash,
    expires_at: p.expires_at,
    revoked: false,
    revoked_at: null,
    created_at: p.created_at,
    user_agent: p.user_agent,
    ip_address: p.ip_address,
    access_jti: p.access_jti ?? null,
  }),
);

export async function insertRefreshToken(db: Db, token: NewRefreshToken): Promise<void> {
  await insertQuery.run(db, token);
}

/**
 * Revokes the token if, and only if, it is still active: one conditional UPDATE, so of several
 * concurrent refreshes with the same token exactly one gets the row back.
 */
const revokeIfActiveQuery = compiled((db, p: { tokenHash: string; now: string }) =>
  db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: p.now })
    .where('token_hash', '=', p.tokenHash)
    .where('revoked', '=', false)
    .where('expires_at', '>', p.now)
    .returning(TOKEN_COLUMNS),
);

export function revokeIfActive(db: Db, tokenHash: string, now: string): Promise<RefreshTokenRow | undefined> {
  return revokeIfActiveQuery.takeFirst(db, { tokenHash, now });
}

const findByHashQuery = compiled((db, p: { tokenHash: string }) =>
  db.selectFrom('refresh_tokens').select(TOKEN_COLUMNS).where('token_hash', '=', p.tokenHash),
);

export function findByHash(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return findByHashQuery.takeFirst(db, { tokenHash });
}

/** True when the token has a successor: it was spent on a refresh, not revoked by a sign-out. */
export async function wasRotated(db: Db, token: { id: string; family_id: string }): Promise<boolean> {
  const child = await db
    .selectFrom('refresh_tokens')
    .select('id')
    .where('family_id', '=', token.family_id) // uses the family index
    .where('parent_id', '=', token.id)
    .limit(1)
    .executeTakeFirst();
  return child !== undefined;
}

export async function revokeAllForUser(db: Db, userId: string, now: string): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked', '=', false)
    .execute();
}

export async function revokeFamily(db: Db, familyId: string, now: string): Promise<number> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Deletes tokens that can never be used again: expired ones, and revoked ones whose whole session
 * is over. Revoked tokens of a live session stay, so replaying one still triggers theft detection.
 */
export async function pruneRefreshTokens(db: Db, now: string): Promise<number> {
  const result = await db
    .deleteFrom('refresh_tokens')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([
          eb('revoked', '=', true),
          eb(
            'family_id',
            'not in',
            eb
              .selectFrom('refresh_tokens as live')
              .select('live.family_id')
              .where('live.revoked', '=', false)
              .where('live.expires_at', '>', now),
          ),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A session is a refresh-token family: the tokens of one login, linked by rotation. */
export interface ActiveTokenRow {
  family_id: string;
  /** When the family's oldest stored token was issued: the login, unless that token was pruned. */
  started_at: string;
  created_at: string;
  user_agent: string | null;
  ip_address: string | null;
}

/**
 * The user's active tokens with the start of their session, newest session first. Rotation
 * revokes a token as it issues the next, so a session normally has exactly one active token.
 */
/** The session (family) whose refresh token was issued with the access token `accessJti`, if any. */
export async function familyOfAccessToken(db: Db, userId: string, accessJti: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('refresh_tokens')
    .select('family_id')
    .where('user_id', '=', userId)
    .where('access_jti', '=', accessJti)
    .limit(1)
    .executeTakeFirst();
  return row?.family_id;
}

/**
 * Whether the access token `accessJti` of `userId` belongs to a session that is still alive: the
 * refresh token issued with it is stored, and its family still has an active, unexpired token. A
 * rotation revokes that token but continues the family, so an access token from before a refresh
 * stays good while its session lives; logout, a password change, a session revoke, reuse detection
 * and deletion leave the family with no active token (or no rows), and the token is refused.
 */
const accessTokenIsLiveQuery = compiled((db, p: { userId: string; accessJti: string; now: string }) =>
  db
    .selectFrom('refresh_tokens as t')
    .select('t.family_id')
    .where('t.access_jti', '=', p.accessJti) // refresh_tokens_access_jti
    .where('t.user_id', '=', p.userId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('refresh_tokens as f')
          .select('f.id')
          .whereRef('f.family_id', '=', 't.family_id') // refresh_tokens_family_id
          .where('f.revoked', '=', false)
          .where('f.expires_at', '>', p.now),
      ),
    )
    .limit(1),
);

export async function accessTokenIsLive(db: Db, userId: string, accessJti: string, now: string): Promise<boolean> {
  return (await accessTokenIsLiveQuery.takeFirst(db, { userId, accessJti, now })) !== undefined;
}

/**
 * When the session of this access token began: the created_at of its family's first token (the
 * login), or undefined when the token names no session of this user.
 */
export async function sessionStartedAt(db: Db, userId: string, accessJti: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('refresh_tokens as t')
    .innerJoin('refresh_tokens as first', 'first.id', 't.family_id')
    .select('first.created_at')
    .where('t.access_jti', '=', accessJti)
    .where('t.user_id', '=', userId)
    .executeTakeFirst();
  return row?.created_at;
}

/** Of these access tokens (jti and user), the jtis whose session is alive, as accessTokenIsLive; one statement. */
export async function liveAccessTokens(
  db: Db,
  tokens: ReadonlyArray<{ userId: string; jti: string }>,
  now: string,
): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const rows = await db
    .selectFrom('refresh_tokens as t')
    .select(['t.access_jti', 't.user_id'])
    .where('t.access_jti', 'in', [...new Set(tokens.map((t) => t.jti))])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('refresh_tokens as f')
          .select('f.id')
          .whereRef('f.family_id', '=', 't.family_id')
          .where('f.revoked', '=', false)
          .where('f.expires_at', '>', now),
      ),
    )
    .execute();
  const owner = new Map(rows.map((r) => [r.access_jti, r.user_id]));
  return new Set(tokens.filter((t) => owner.get(t.jti) === t.userId).map((t) => t.jti));
}

export function listActiveTokens(db: Db, userId: string, now: string): Promise<ActiveTokenRow[]> {
  return db
    .selectFrom('refresh_tokens as t')
    .where('t.user_id', '=', userId)
    .where('t.revoked', '=', false)
    .where('t.expires_at', '>', now)
    .select((eb) => [
      't.family_id',
      't.created_at',
      't.user_agent',
      't.ip_address',
      eb
        .selectFrom('refresh_tokens as f')
        .select((f) => f.fn.min('f.created_at').as('first'))
        .whereRef('f.family_id', '=', 't.family_id')
        .as('started_at'),
    ])
    .orderBy('started_at', 'desc')
    .orderBy('t.family_id', 'desc')
    .orderBy('t.created_at', 'desc')
    .execute() as Promise<ActiveTokenRow[]>;
}

/**
 * Revokes the user's session: its active tokens, in one statement. 0 means the user has no such
 * active session (unknown, someone else's, or already over), which callers answer as not found.
 */
export async function revokeSessionTokens(db: Db, userId: string, familyId: string, now: string): Promise<number> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ revoked: true, revoked_at: now })
    .where('family_id', '=', familyId)
    .where('user_id', '=', userId)
    .where('revoked', '=', false)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
