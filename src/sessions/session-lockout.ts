import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import type { SessionFailures } from './login-throttle.js';
import { familyOfAccessToken } from './refresh-token.repository.js';
import { requireUserId, type Claims } from './tokens.js';

/** Who asks: the claims of the caller's access token, whose subject and jti name its session. */
export type Caller = Claims;

export interface SessionLockoutServices {
  db: Db;
  log: FastifyBaseLogger;
  /** Failure counts per session (absent with RATE_LIMIT=off). */
  sessionFailures?: SessionFailures | undefined;
}

/**
 * Runs `check` (true: the secret offered is right) as one attempt of the caller's session: a
 * password or one-time code asked of someone already signed in (re-authentication, the owner's
 * password change and deletion). Counted before the check, so a parallel burst cannot slip past;
 * 429 with Retry-After, without a check, while the session is locked; a right secret clears the
 * count. Keyed on the session, not the account (login-throttle.ts, SessionFailures): the login's
 * per-account lockout neither stops these checks nor is fed by them.
 *
 * An access token whose session is not found is refused (401, as session binding refuses an ended
 * session) before anything is checked: past session binding (http/access.ts) it cannot happen,
 * unless the session's rows were deleted in between, and a check with nothing to count it against
 * would be an unlimited one.
 */
export async function checkInSession(
  s: SessionLockoutServices,
  caller: Caller,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const session = await familyOfAccessToken(s.db, requireUserId(caller), caller.jti);
  if (session === undefined) throw Errors.unauthorized();
  let refusal: number | undefined;
  try {
    refusal = await s.sessionFailures?.countAttempt(session);
  } catch (error) {
    // Fail open, as the login does: a Redis outage must not stop every change.
    s.log.error({ err: error }, 'session throttle store failed; attempt let through');
  }
  if (refusal !== undefined) throw Errors.tooManyRequests(Math.ceil(refusal / 1000));
  const right = await check();
  if (right) {
    try {
      await s.sessionFailures?.clear(session);
    } catch (error) {
      s.log.error({ err: error }, 'session throttle store failed; failure count not cleared');
    }
  }
  return right;
}
