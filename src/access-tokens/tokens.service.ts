import type { AccountStore } from '../accounts/accounts.service.js';
import { audit } from '../audit/audit.service.js';
import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import { hashPersonalToken, isValidPersonalToken, newPersonalToken } from './personal-token.js';
import * as store from './tokens.repository.js';

export const SCOPES = ['notes:read', 'notes:write', 'dav'] as const;
export type Scope = (typeof SCOPES)[number];

export interface AccessToken {
  id: string;
  name: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** A use is written down at most this often per token. */
const TOUCH_EVERY_MS = 60_000;

const toToken = (row: store.AccessTokenRow): AccessToken => ({
  id: row.id,
  name: row.name,
  scopes: row.scopes.split(',').filter((s) => s !== '') as Scope[],
  created_at: row.created_at,
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
});

/**
 * A new token, shown once, for a caller who gave the password again (the route asks,
 * auth/reauthentication.service.ts), as for every change of credentials.
 */
export async function createToken(
  s: AccountStore,
  userId: string,
  input: { name: string; scopes: Scope[]; expires_in_days?: number | undefined },
  client: ClientInfo,
): Promise<AccessToken & { token: string }> {
  const token = newPersonalToken();
  const now = new Date();
  const row = {
    id: newId(),
    user_id: userId,
    name: input.name.trim(),
    token_hash: hashPersonalToken(token),
    scopes: [...new Set(input.scopes)].sort().join(','),
    created_at: now.toISOString(),
    expires_at:
      input.expires_in_days === undefined
        ? null
        : new Date(now.getTime() + input.expires_in_days * DAY_MS).toISOString(),
    last_used_at: null,
  };
  await store.insertToken(s.db, row);
  await audit(s, {
    kind: 'token_create',
    outcome: 'success',
    userId,
    client,
    detail: `token ${row.id} (${row.scopes})`,
  });
  return { ...toToken(row), token };
}

export async function listTokens(db: Db, userId: string): Promise<AccessToken[]> {
  return (await store.listTokens(db, userId)).map(toToken);
}

export async function revokeToken(
  s: Pick<AccountStore, 'db' | 'log' | 'credentialsRevoked'>,
  userId: string,
  id: string,
  client: ClientInfo,
): Promise<void> {
  if (!(await store.deleteToken(s.db, userId, id))) throw Errors.tokenNotFound();
  s.credentialsRevoked?.(userId);
  await audit(s, { kind: 'token_revoke', outcome: 'success', userId, client, detail: `token ${id}` });
}

/**
 * The access layer's check of a `Bearer vlm_…`: the checksum first (no look-up for a malformed
 * token), then the stored hash, expiry and scope. Returns the user id; 'insufficient_scope' for a
 * valid, live token without this scope (the caller is told which scope it needs: 403, issue #42);
 * undefined for any other refusal.
 */
export async function authenticateToken(
  db: Db,
  token: string,
  scope: Scope,
): Promise<{ userId: string; id: string; expiresAt: string | null } | 'insufficient_scope' | undefined> {
  if (!isValidPersonalToken(token)) return undefined;
  const row = await store.findTokenByHash(db, hashPersonalToken(token));
  if (row === undefined) return undefined;
  const now = new Date();
  if (row.expires_at !== null && row.expires_at <= now.toISOString()) return undefined;
  if (!row.scopes.split(',').includes(scope)) return 'insufficient_scope';
  await store.touchToken(db, row.id, now.toISOString(), new Date(now.getTime() - TOUCH_EVERY_MS).toISOString());
  return { userId: row.user_id, id: row.id, expiresAt: row.expires_at };
}

/** Of these tokens (id and user), the ids that still exist and have not expired: one statement, for live streams. */
export async function liveTokenIds(
  db: Db,
  tokens: ReadonlyArray<{ userId: string; id: string }>,
  now: string,
): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const rows = await store.findLiveTokens(db, [...new Set(tokens.map((t) => t.id))], now);
  const owner = new Map(rows.map((r) => [r.id, r.user_id]));
  return new Set(tokens.filter((t) => owner.get(t.id) === t.userId).map((t) => t.id));
}
