import * as users from '../accounts/user.repository.js';
import { attemptedUsername, isValidUsername, normalizeUsername } from '../accounts/username.js';
import { audit } from '../audit/audit.service.js';
import { Errors } from '../errors.js';
import { checkLoginCode } from '../mfa/mfa.service.js';
import type { SecretBox } from '../mfa/secret-box.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { passwordLength, PASSWORD_MAX_LENGTH } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import { openSession, type SessionServices } from '../sessions/sessions.service.js';

/**
 * Signing in with a password, and a second factor where the account has one: the one place that
 * asks accounts (the user), mfa (the code) and sessions (the new session) together; none of them
 * imports this folder.
 */
export interface LoginServices extends SessionServices {
  hasher: PasswordHasher;
  /** Opens the TOTP secrets, for the second step of a login. */
  box: SecretBox;
  /** PASSWORD_LOGIN: false refuses password logins of accounts that are not administrators (absent: on). */
  passwordLogin?: boolean;
}

/**
 * Unknown user and wrong password cost the same and answer the same. With the right password, an
 * account with a second factor needs `code` (a TOTP or recovery code): without one the answer is
 * 401 mfa_required, which tells the client to ask for it; a wrong one counts as a failed login.
 */
export async function login(s: LoginServices, username: string, password: string, client: ClientInfo, code?: string) {
  // Every failure writes the same kind of event, so the trail adds no timing difference either.
  const fail = async (userId: string | null, detail: string) => {
    await audit(s, {
      kind: 'login',
      outcome: 'failure',
      userId,
      username: attemptedUsername(username),
      client,
      detail,
    });
    return Errors.invalidCredentials();
  };
  if (passwordLength(password) > PASSWORD_MAX_LENGTH) throw await fail(null, 'password too long');
  // A name no account can have (signup's rule) is an unknown user without a look-up: PostgreSQL
  // refuses some such names outright (U+0000 in text), which must not become a 500.
  const normalized = normalizeUsername(username);
  const row = isValidUsername(normalized) ? await users.findUserByUsername(s.db, normalized) : undefined;
  if (row === undefined) {
    await s.hasher.verifyDummy(password);
    throw await fail(null, 'unknown user');
  }
  // An account an administrator created has no password until its set-up link is used (an empty
  // hash, which argon2 refuses at once): it costs a hash like any other, so timing says nothing.
  if (row.password_hash === '') {
    await s.hasher.verifyDummy(password);
    throw await fail(row.id, 'no password set yet');
  }
  if (!(await s.hasher.verify(row.password_hash, password))) throw await fail(row.id, 'wrong password');
  // A disabled account is refused like a wrong password, before the second factor says the password was right.
  if (row.disabled) throw await fail(row.id, 'account disabled');
  // After the password, so the answer tells nothing to someone who does not know it; administrators keep this way in.
  if (s.passwordLogin === false && !row.is_admin) {
    await fail(row.id, 'password login is off');
    throw Errors.passwordLoginDisabled();
  }
  const second = await checkLoginCode(s, row.id, code);
  if (second === 'missing' || second === 'wrong') {
    await fail(row.id, second === 'missing' ? 'one-time code required' : 'wrong one-time code');
    throw second === 'missing' ? Errors.mfaRequired() : Errors.invalidMfaCode();
  }
  await s.checkpoint?.('login:verified');
  const how =
    second === 'totp'
      ? 'password and authenticator app'
      : second === 'recovery'
        ? 'password and a recovery code'
        : 'password';
  return openSession(s, row, client, how);
}
