import type { Db } from '../db/schema.js';
import { nowIso } from '../db/values.js';
import { isUuid } from '../shared/ids.js';
import { accessTokenIsLive } from './refresh-token.repository.js';
import type { Claims } from './tokens.js';

/**
 * Access tokens are bound to their session (docs/api.md, "Token binding"): where a route asks (every
 * /api/auth route that takes one, access.ts; an event stream as it opens and while it lasts,
 * events/), a token whose session has ended is refused, although it verifies. One indexed read,
 * always from the database, so an instance never trusts a session another instance has ended.
 * The notes routes do not ask: there an access token stays stateless for its 15 minutes, but for
 * its account being disabled (accounts/account-status.ts, cached per instance).
 */
export function sessionIsLive(db: Db, claims: Claims): Promise<boolean> {
  // A sub that is no user id names no session, and no route can act on it: each answers 400
  // Invalid user ID (spec), which tells the client more than a 401 would.
  if (!isUuid(claims.sub)) return Promise.resolve(true);
  return accessTokenIsLive(db, claims.sub.toLowerCase(), claims.jti, nowIso());
}
