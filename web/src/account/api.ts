import { api, raw, session, unwrap, type Json } from '../api/client';
import type { components, paths } from '../api/schema';

export type { SessionRow, User } from '../api/client';
export type AccessToken = components['schemas']['AccessToken'];
export type TokenScope = AccessToken['scopes'][number];
export type Passkey = components['schemas']['Passkey'];
/** The second factors the account has set up. */
export type Mfa = Json<'/api/auth/me', 'get'>['mfa'];
export type TotpSetup = Json<'/api/auth/2fa/totp', 'post'>;

export async function secondFactors(): Promise<Mfa> {
  return unwrap(await api.GET('/api/auth/me')).mfa;
}

/** Changes the password; every other session ends and this one carries on with a new token. */
export async function changePassword(oldPassword: string, newPassword: string): Promise<void> {
  const result = unwrap(
    await api.PUT('/api/auth/owner', { body: { old_password: oldPassword, new_password: newPassword } }),
  );
  session.setAccessToken(result.access_token);
}

export async function deleteAccount(password: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/owner', { body: { password } }));
}

export async function listSessions(signal?: AbortSignal) {
  return unwrap(await api.GET('/api/auth/sessions', { signal }));
}

/**
 * What a sensitive change carries to show the account holder makes it: the password, or, for an
 * account without one (single sign-on), a current one-time code or a fresh passkey assertion.
 */
export type Reauthentication = { password: string } | { code: string } | { credential: unknown };

/** The fields as the generated body types spell them (a passkey assertion is checked by the server). */
const proof = (given: Reauthentication) => given as { password?: string; code?: string; credential?: never };

export async function endSession(sessionId: string, given: Reauthentication): Promise<void> {
  unwrap(
    await api.DELETE('/api/auth/sessions/{sessionID}', {
      params: { path: { sessionID: sessionId } },
      body: proof(given),
    }),
  );
}

/** Signs out every other device; this one carries on with the new session's token. */
export async function endOtherSessions(given: Reauthentication): Promise<void> {
  const result = unwrap(await api.POST('/api/auth/sessions/end-others', { body: proof(given) }));
  session.setAccessToken(result.access_token);
}

export async function listAccessTokens(signal?: AbortSignal): Promise<AccessToken[]> {
  return unwrap(await api.GET('/api/auth/tokens', { signal }));
}

/** A new token; its secret (`token`) is in this answer only. */
export async function createAccessToken(body: {
  name: string;
  scopes: TokenScope[];
  password: string;
  expires_in_days?: number;
}) {
  return unwrap(await api.POST('/api/auth/tokens', { body }));
}

export async function revokeAccessToken(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/tokens/{id}', { params: { path: { id } } }));
}

/** Starts setting up an authenticator app: its secret and QR code, not yet in use. */
export async function startTotp(password: string): Promise<TotpSetup> {
  return unwrap(await api.POST('/api/auth/2fa/totp', { body: { password } }));
}

/** A right code turns two-step sign-in on: the recovery codes, shown only now. */
export async function confirmTotp(code: string): Promise<string[]> {
  return unwrap(await api.POST('/api/auth/2fa/totp/confirm', { body: { code } })).recovery_codes;
}

export async function turnOffTotp(password: string, code: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/2fa/totp', { body: { password, code } }));
}

/** New recovery codes (the old ones stop working), shown only now. */
export async function newRecoveryCodes(password: string, code: string): Promise<string[]> {
  return unwrap(await api.POST('/api/auth/2fa/recovery-codes', { body: { password, code } })).recovery_codes;
}

export async function listPasskeys(): Promise<Passkey[]> {
  return unwrap(await api.GET('/api/auth/passkeys'));
}

/** The challenge a new passkey answers (asked with the password: a stolen session cannot add one). */
export async function passkeyRegistrationOptions(given: Reauthentication) {
  return unwrap(await api.POST('/api/auth/passkeys/options', { body: proof(given) }));
}

export async function addPasskey(name: string, credential: unknown): Promise<Passkey> {
  return unwrap(await api.POST('/api/auth/passkeys', { body: { name, credential: credential as never } }));
}

export async function removePasskey(id: string, given: Reauthentication): Promise<void> {
  unwrap(await api.DELETE('/api/auth/passkeys/{id}', { params: { path: { id } }, body: proof(given) }));
}

/** An export as a file: its contents and the name the server gives it (or `fallbackName`). */
export async function exportFile(
  format: 'json' | 'markdown' | 'archive',
  fallbackName: string,
): Promise<{ name: string; blob: Blob }> {
  const response = await raw(format === 'json' ? '/api/export' : `/api/export?format=${format}`);
  if (!response.ok) throw new Error(`Export failed (${response.status})`);
  const name = /filename="?([^";]+)"?/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  return { name, blob: await response.blob() };
}

type Imported = paths['/api/import']['post']['responses'][201]['content']['application/json'];
/** An import's answer: what was imported, or a problem (409 import_existing says how many notes are here already). */
export type ImportAnswer = Partial<Imported> & { detail?: string; code?: string; existing?: number };

/** Sends an export file as it is (JSON, Markdown or a zip); `existing` says what to do with notes already here. */
export async function importFile(
  file: File,
  contentType: string,
  existing: 'ask' | 'skip' | 'copy',
): Promise<{ status: number; ok: boolean; body: ImportAnswer }> {
  const response = await raw(`/api/import?existing=${existing}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: file,
  });
  const body = (await response.json().catch(() => ({}))) as ImportAnswer;
  return { status: response.status, ok: response.ok, body };
}

/** Second factors and whether REQUIRE_SECOND_FACTOR still sends this account to set one up (GET /auth/me). */
/** How this account confirms a sensitive change: a password, or (without one) a code or a passkey. */
export async function reauthenticationMethods(): Promise<{ password: boolean; passkeys: boolean }> {
  const me = unwrap(await api.GET('/api/auth/me'));
  return { password: me.has_password, passkeys: me.mfa.passkeys > 0 };
}

export async function enrolmentStatus(): Promise<{ mfa: Mfa; required: boolean }> {
  const me = unwrap(await api.GET('/api/auth/me'));
  return { mfa: me.mfa, required: me.mfa_enrolment_required };
}

/**
 * Sets (a confirmation link is mailed; the address counts once it is followed) or, with null,
 * removes the account's e-mail address; needs the password.
 */
export async function changeEmail(email: string | null, password: string) {
  const { data, error, response } = await api.PUT('/api/auth/owner/email', { body: { email, password } });
  return unwrap({ data, error, response });
}
