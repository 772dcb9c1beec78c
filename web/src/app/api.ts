import { api, mayHaveSession, session, unwrap, type Json } from '../api/client';
import { isNetworkError } from '../offline/connection';

export type { User } from '../api/client';
/** The signed-in account as GET /auth/me answers (with `mfa_enrolment_required`). */
export type Me = Json<'/api/auth/me', 'get'>;

/** Whether REQUIRE_SECOND_FACTOR sends this account to set up a second factor first. */
export async function enrolmentRequired(): Promise<boolean> {
  try {
    return unwrap(await api.GET('/api/auth/me')).mfa_enrolment_required;
  } catch {
    return false;
  }
}

/** A reload keeps the user signed in through the refresh cookie: who they are, or null. */
export async function resumeSession(): Promise<Me | null> {
  if (!mayHaveSession() || !(await session.refresh())) return null;
  try {
    return unwrap(await api.GET('/api/auth/me'));
  } catch (error) {
    // Unreachable: the caller may open offline as the account seen last (app.tsx).
    if (isNetworkError(error)) throw error;
    return null;
  }
}

const LOGOUT_PENDING = 'vellum.logout-pending';

/**
 * "Log out": ends this device's session on the server, best effort (the caller drops the tokens
 * here with forgetSession either way); the account's other sessions go on. Offline, the logout is
 * remembered on this device: no reload resumes the session (the refresh cookie is still there), and
 * the server is told once it can be reached.
 */
export async function logOut(): Promise<void> {
  // Remembered before asking: a reload or a closed tab before the server answers (the request then
  // never arrives) still finds the logout at the next start, not the session resumed.
  localStorage.setItem(LOGOUT_PENDING, '1');
  const told = await api.DELETE('/api/auth/sessions/current').then(
    () => true,
    () => false,
  );
  if (told) localStorage.removeItem(LOGOUT_PENDING);
}

/** "Log out everywhere": ends every session of the account, this one included (the spec's /auth/logout). */
export async function logOutEverywhere(): Promise<void> {
  unwrap(await api.POST('/api/auth/logout'));
}

/** A logout made offline: told to the server now if it can be; signed out either way (true). */
export async function pendingLogout(): Promise<boolean> {
  if (localStorage.getItem(LOGOUT_PENDING) === null) return false;
  try {
    if (await session.refresh()) await api.DELETE('/api/auth/sessions/current');
    localStorage.removeItem(LOGOUT_PENDING);
  } catch {
    // Still unreachable: told next time.
  }
  session.setAccessToken(null);
  return true;
}

/** A new sign-in replaced the refresh cookie: the old session has nothing left on this device. */
export function signedInAgain(): void {
  localStorage.removeItem(LOGOUT_PENDING);
}

/** Drops the tokens held in memory. */
export function forgetSession(): void {
  session.setAccessToken(null);
}
