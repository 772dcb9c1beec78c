import { nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { audit } from '../audit/audit.service.js';
import { requireUserId, type AuthServices, type ClientInfo } from '../accounts/accounts.service.js';
import * as sessions from './sessions.repository.js';
import * as users from '../accounts/user.repository.js';
import type { Claims } from './tokens.js';

export interface Session {
  /** The family id: stable across rotations, unlike any token. */
  id: string;
  created_at: string;
  last_used_at: string;
  user_agent: string | null;
  ip_address: string | null;
}

/** The caller's active sessions, one per login, newest first. */
export async function listSessions(s: AuthServices, claims: Claims): Promise<Session[]> {
  const rows = await sessions.listActiveTokens(s.db, requireUserId(claims), nowIso());
  const byFamily = new Map<string, Session>();
  for (const row of rows) {
    // Rows of a family are newest token first; should a race ever leave two active, the newer describes it.
    if (byFamily.has(row.family_id)) continue;
    byFamily.set(row.family_id, {
      id: row.family_id,
      created_at: row.started_at,
      last_used_at: row.created_at,
      user_agent: row.user_agent,
      ip_address: row.ip_address,
    });
  }
  return [...byFamily.values()];
}

/** Signs the session out everywhere it is used; its access tokens live on until they expire. */
export async function revokeSession(s: AuthServices, claims: Claims, sessionId: string, client: ClientInfo): Promise<void> {
  const userId = requireUserId(claims);
  // The user row's lock first, as refreshes take it: one in flight for this session commits its new
  // token before this revokes the session, or finds its token revoked.
  const revoked = await s.db.transaction().execute(async (trx) => {
    await users.lockSessions(trx, userId);
    return sessions.revokeSession(trx, userId, sessionId, nowIso());
  });
  await audit(s, {
    kind: 'session_revoke',
    outcome: revoked > 0 ? 'success' : 'failure',
    userId,
    client,
    detail: revoked > 0 ? `session ${sessionId}` : `session ${sessionId} not found`,
  });
  if (revoked === 0) throw Errors.sessionNotFound();
}
