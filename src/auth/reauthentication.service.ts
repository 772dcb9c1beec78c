import * as users from '../accounts/user.repository.js';
import { audit, type EventKind } from '../audit/audit.service.js';
import { Errors } from '../errors.js';
import { requireUserId } from '../shared/claims.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { checkLoginCode, mfaStatus } from '../mfa/mfa.service.js';
import { verifyAssertion, type WebAuthnSettings } from '../mfa/passkeys.service.js';
import type { SecretBox } from '../mfa/secret-box.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { passwordLength, PASSWORD_MAX_LENGTH } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import type { Reauthentication } from '../sessions/reauthentication.js';
import { sessionStartedAt } from '../sessions/refresh-token.repository.js';
import { checkInSession, type Caller, type SessionLockoutServices } from '../sessions/session-lockout.js';

export interface ReauthenticationServices extends SessionLockoutServices {
  hasher: PasswordHasher;
  box: SecretBox;
  /** Where passkeys are bound, to check an assertion offered instead of the password. */
  web: WebAuthnSettings;
}

/** How long after signing in an account without a password or factor may set up its first factor unasked. */
export const FIRST_FACTOR_WINDOW_MS = 10 * 60_000;

/** An account made by single sign-on may have no password: an empty hash, which no password verifies. */
const hasPassword = (row: users.UserRow): boolean => typeof row.password_hash === 'string' && row.password_hash !== '';

/**
 * Checks the proof of a sensitive change by the caller (`kind` names the change in the audit
 * trail): 401 reauthentication_required when it is missing or wrong. A wrong one counts against
 * the caller's session, before it is checked (session-lockout.ts), not against the account's login
 * lockout: failed logins cannot stop the signed-in owner from ending a thief's sessions, and a
 * thief's guesses lock only the stolen session; a locked session gets 429 without a check.
 * Failures are audited as login failures are. Answers the caller's row (404 when the account is
 * gone). Call it first, before anything of the change is done.
 */
export async function reauthenticate(
  s: ReauthenticationServices,
  caller: Caller,
  proof: Reauthentication,
  client: ClientInfo,
  kind: EventKind,
): Promise<users.UserRow> {
  const row = await users.findUserById(s.db, requireUserId(caller));
  if (row === undefined) throw Errors.userNotFound();
  const fail = async (detail: string) => {
    await audit(s, { kind, outcome: 'failure', userId: row.id, username: row.username, client, detail });
    return Errors.reauthenticationRequired();
  };
  const withPassword = hasPassword(row);
  if (!withPassword && kind === 'mfa_enrol' && proof.code === undefined && proof.credential === undefined) {
    // An account without a password and without a factor has nothing to be asked for: its first
    // factor is set up within FIRST_FACTOR_WINDOW_MS of signing in (single sign-on), the sign-in
    // standing for the proof. Later, or once it has a factor, the factor is asked for.
    const factors = await mfaStatus(s.db, row.id);
    const started = await sessionStartedAt(s.db, row.id, caller.jti);
    if (
      !factors.totp &&
      factors.passkeys === 0 &&
      started !== undefined &&
      Date.now() - Date.parse(started) <= FIRST_FACTOR_WINDOW_MS
    )
      return row;
  }
  if (!withPassword && proof.credential !== undefined) {
    // A fresh passkey assertion of this account: the challenge is single use, so it proves presence now.
    const right = await checkInSession(s, caller, async () => {
      const checked = await verifyAssertion(s, s.web, proof.credential as AuthenticationResponseJSON);
      return checked.ok && checked.passkey.user_id === row.id;
    });
    if (!right) throw await fail('passkey assertion refused');
    return row;
  }
  const offered = withPassword ? proof.password : proof.code;
  if (offered === undefined || offered === '')
    throw await fail(withPassword ? 'password missing' : 'one-time code missing');

  const right = await checkInSession(s, caller, async () =>
    withPassword
      ? passwordLength(offered) <= PASSWORD_MAX_LENGTH && (await s.hasher.verify(row.password_hash, offered))
      : ['totp', 'recovery'].includes(await checkLoginCode(s, row.id, offered)),
  );
  if (!right) throw await fail(withPassword ? 'wrong password' : 'wrong one-time code');
  return row;
}
