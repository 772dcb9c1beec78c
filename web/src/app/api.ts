import { api, mayHaveSession, session, unwrap, type User } from '../api/client';

export type { User } from '../api/client';

/** A reload keeps the user signed in through the refresh cookie: who they are, or null. */
export async function resumeSession(): Promise<User | null> {
  if (!mayHaveSession() || !(await session.refresh())) return null;
  try {
    return unwrap(await api.GET('/api/auth/me'));
  } catch {
    return null;
  }
}

/**
 * "Log out": ends this device's session on the server, best effort (the caller drops the tokens
 * here with forgetSession either way). The account's other sessions go on.
 */
export async function logOut(): Promise<void> {
  await api.DELETE('/api/auth/sessions/current').catch(() => undefined);
}

/** "Log out everywhere": ends every session of the account, this one included (the spec's /auth/logout). */
export async function logOutEverywhere(): Promise<void> {
  unwrap(await api.POST('/api/auth/logout'));
}

/** Drops the tokens held in memory. */
export function forgetSession(): void {
  session.setAccessToken(null);
}
