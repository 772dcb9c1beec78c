import { api, mayHaveSession, session, unwrap, type Json } from '../api/client';

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
  } catch {
    return null;
  }
}

/** Ends the session on the server, best effort: the caller drops the tokens here (forgetSession) either way. */
export async function logOut(): Promise<void> {
  await api.POST('/api/auth/logout').catch(() => undefined);
}

/** Drops the tokens held in memory. */
export function forgetSession(): void {
  session.setAccessToken(null);
}
