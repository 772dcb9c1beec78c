import type { FastifyBaseLogger } from 'fastify';
import * as users from '../accounts/user.repository.js';
import { audit, type EventKind } from '../audit/audit.service.js';
import type { Db } from '../db/schema.js';
import { Errors } from '../errors.js';
import { checkLoginCode } from '../mfa/mfa.service.js';
import type { SecretBox } from '../mfa/secret-box.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { passwordLength, PASSWORD_MAX_LENGTH } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import type { LoginFailures } from './login-throttle.js';

/**
 * What a request for a sensitive change carries to prove its sender is the account holder now, not
 * just the holder of an access token (ASVS 5.0 7.5.1): the password; for an account without one,
 * a current TOTP or recovery code (`credential`, a fresh passkey assertion, is not accepted yet).
 */
export interface Reauthentication {
  password?: string | undefined;
  code?: string | undefined;
}

export interface ReauthenticationServices {
  db: Db;
  hasher: PasswordHasher;
  box: SecretBox;
  log: FastifyBaseLogger;
  /** The login's per-account failure counts (absent with RATE_LIMIT=off). */
  loginFailures?: LoginFailures | undefined;
}

/**
 * Single sign-on will create accounts without a password (CONTRACT.md part 3); none exist yet.
 * Such an account has an empty hash, which no password verifies.
 */
const hasPassword = (row: users.UserRow): boolean => typeof row.password_hash === 'string' && row.password_hash !== '';

/**
 * Checks the proof of a sensitive change by `userId` (`kind` names the change in the audit trail):
 * 401 reauthentication_required when it is missing or wrong. A wrong one counts against the
 * account's login failure limit, before it is checked, exactly as a login attempt does, so guesses
 * through a stolen access token and through the login page add up; a locked account gets 429
 * without a check. Failures are audited as login failures are. Answers the caller's row (404 when
 * the account is gone). Call it first, before anything of the change is done.
 */
export async function reauthenticate(
  s: ReauthenticationServices, userId: string, proof: Reauthentication, client: ClientInfo, kind: EventKind,
): Promise<users.UserRow> {
  const row = await users.findUserById(s.db, userId);
  if (row === undefined) throw Errors.userNotFound();
  const fail = async (detail: string) => {
    await audit(s, { kind, outcome: 'failure', userId: row.id, username: row.username, client, detail });
    return Errors.reauthenticationRequired();
  };
  const withPassword = hasPassword(row);
  const offered = withPassword ? proof.password : proof.code;
  if (offered === undefined || offered === '') throw await fail(withPassword ? 'password missing' : 'one-time code missing');

  await countAttempt(s, row.username);
  const right = withPassword
    ? passwordLength(offered) <= PASSWORD_MAX_LENGTH && await s.hasher.verify(row.password_hash, offered)
    : ['totp', 'recovery'].includes(await checkLoginCode(s, row.id, offered));
  if (!right) throw await fail(withPassword ? 'wrong password' : 'wrong one-time code');
  try {
    await s.loginFailures?.clear(row.username);
  } catch (error) {
    s.log.error({ err: error }, 'login throttle store failed; failure count not cleared');
  }
  return row;
}

async function countAttempt(s: ReauthenticationServices, username: string): Promise<void> {
  let refusal: number | undefined;
  try {
    refusal = await s.loginFailures?.countAttempt(username);
  } catch (error) {
    // Fail open, as the login does: a Redis outage must not stop every change.
    s.log.error({ err: error }, 'login throttle store failed; attempt let through');
    return;
  }
  if (refusal !== undefined) throw Errors.tooManyRequests(Math.ceil(refusal / 1000));
}
