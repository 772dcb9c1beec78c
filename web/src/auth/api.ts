import { api, session, unwrap, type User } from '../api/client';

export type { PasswordRulesRow, User } from '../api/client';

export async function signUp(username: string, password: string, invitation?: string): Promise<void> {
  unwrap(
    await api.POST('/api/auth/signup', {
      // A person signing up here starts with a welcome note (an account made through the API alone starts empty).
      body: { username, password, welcome_note: true, ...(invitation === undefined ? {} : { invitation }) },
    }),
  );
}

/** What this server allows: sign-up mode, password login, single sign-on (GET /auth/config). */
export async function authConfig(signal?: AbortSignal) {
  return unwrap(await api.GET('/api/auth/config', { signal }));
}

/** Chooses the password of an account an administrator created (its set-up link); signs in. */
export async function completeSetup(token: string, password: string): Promise<User> {
  const result = unwrap(await api.POST('/api/auth/setup', { body: { token, password } }));
  session.setAccessToken(result.access_token);
  return result.user;
}

/** Signs in with a password (and a second-factor code when the account has one); the session holds the token. */
export async function logIn(body: { username: string; password: string; code?: string }): Promise<User> {
  const result = unwrap(await api.POST('/api/auth/login', { body, params: { query: { includeUser: 'true' } } }));
  session.setAccessToken(result.access_token);
  return result.user!;
}

/** The challenge a passkey sign-in answers. */
export async function passkeyLoginOptions() {
  return unwrap(await api.POST('/api/auth/passkey/options'));
}

/** Signs in with the passkey's answer to the challenge; the session holds the token. */
export async function logInWithPasskey(credential: unknown): Promise<User> {
  const result = unwrap(
    await api.POST('/api/auth/passkey/login', {
      body: { credential: credential as never },
      params: { query: { includeUser: 'true' } },
    }),
  );
  session.setAccessToken(result.access_token);
  return result.user!;
}

export async function passwordRules() {
  return unwrap(await api.GET('/api/auth/password-rules'));
}

/** Whether the password is in the breach list the server checks against. */
export async function checkPassword(password: string, signal?: AbortSignal): Promise<{ breached: boolean }> {
  return unwrap(await api.POST('/api/auth/password-rules/check', { body: { password }, signal }));
}

/** Always accepted, whether or not the account exists: the answer says nothing about it. */
export async function requestPasswordReset(login: string): Promise<string> {
  return unwrap(await api.POST('/api/auth/password-reset', { body: { login } })).message;
}

/** Sets the new password with a reset link's token; every session of the account ends. */
export async function confirmPasswordReset(token: string, newPassword: string): Promise<User> {
  return unwrap(await api.POST('/api/auth/password-reset/confirm', { body: { token, new_password: newPassword } }));
}

/** Confirms an e-mail address with the token of the mailed link. */
export async function confirmEmail(token: string): Promise<User> {
  return unwrap(await api.POST('/api/auth/owner/email/confirm', { body: { token } }));
}
