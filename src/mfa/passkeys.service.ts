import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import * as users from '../accounts/user.repository.js';
import { audit } from '../audit/audit.service.js';
import { isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import { withinJsonDepth } from '../shared/json-depth.js';
import { openSession, type SessionServices } from '../sessions/sessions.service.js';
import * as store from './mfa.repository.js';

/** Where passkeys are bound: PUBLIC_URL's origin and its host name as the relying party. */
export interface WebAuthnSettings {
  origin: string;
  rpId: string;
}

export function webAuthnSettings(publicUrl: string): WebAuthnSettings {
  return { origin: publicUrl, rpId: new URL(publicUrl).hostname };
}

/**
 * The WebAuthn library and the X.509/ASN.1 parsers under it are some 150 modules (~0.3 s of a
 * start-up): imported on demand, so the CLI and the tests' in-process apps never load it, and a
 * server loads it once it is listening (preloadPasskeys), not in the first passkey request.
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () =>
  (library ??= import('@simplewebauthn/server').catch((error: unknown) => {
    library = undefined; // tried again by the next request
    throw error;
  }));

/** Loads the WebAuthn library now; a failure is met again (and retried) by the first passkey request. */
export function preloadPasskeys(): void {
  webauthn().catch(() => undefined);
}

const RP_NAME = 'Vellum';
const CHALLENGE_MS = 5 * 60_000;
const TIMEOUT_MS = 60_000;

export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  backed_up: boolean;
}

const toPasskey = (row: store.PasskeyRow): Passkey => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  backed_up: row.backed_up,
});

/** The challenge inside the browser's answer, to find the one we handed out; null when unreadable. */
function challengeOf(credential: { response: { clientDataJSON: string } }): string | null {
  try {
    const bytes = Buffer.from(credential.response.clientDataJSON, 'base64url');
    if (!withinJsonDepth(bytes)) return null; // the rule of every JSON body (shared/json-depth.ts)
    const data: unknown = JSON.parse(bytes.toString('utf8'));
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' && challenge.length <= 512 ? challenge : null;
  } catch {
    return null;
  }
}

const expiry = () => new Date(Date.now() + CHALLENGE_MS).toISOString();

export async function listPasskeys(s: SessionServices, userId: string): Promise<Passkey[]> {
  return (await store.listPasskeys(s.db, userId)).map(toPasskey);
}

/**
 * Creation options for a new passkey of the caller; a discoverable credential with user
 * verification. `reauthenticated`: the caller gave the password again with this request, so the
 * answer to this challenge needs no password of its own.
 */
export async function registrationOptions(
  s: SessionServices,
  web: WebAuthnSettings,
  userId: string,
  reauthenticated: boolean,
) {
  const user = await users.findUserById(s.db, userId);
  if (user === undefined) throw Errors.userNotFound();
  const existing = await store.listPasskeys(s.db, userId);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: web.rpId,
    userName: user.username,
    userID: Buffer.from(user.id.replace(/-/g, ''), 'hex'),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, ...transportsOf(row) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  const purpose = reauthenticated ? 'register_reauthenticated' : 'register';
  await store.storeChallenge(s.db, { challenge: options.challenge, user_id: userId, purpose, expires_at: expiry() });
  return options;
}

function transportsOf(row: store.PasskeyRow): { transports?: AuthenticatorTransport[] } {
  return row.transports === null || row.transports === ''
    ? {}
    : { transports: row.transports.split(',') as AuthenticatorTransport[] };
}

/**
 * Adds the passkey that answers a live registration challenge of the caller. `reauthenticated`:
 * the password came with this request; without it, only a challenge whose options came with the
 * password will do (a stolen access token alone never adds a passkey). A challenge without the
 * password is left in place for another try with it.
 */
export async function registerPasskey(
  s: SessionServices,
  web: WebAuthnSettings,
  userId: string,
  name: string,
  credential: RegistrationResponseJSON,
  client: ClientInfo,
  reauthenticated: boolean,
): Promise<Passkey> {
  const challenge = challengeOf(credential);
  const purposes = reauthenticated
    ? (['register', 'register_reauthenticated'] as const)
    : (['register_reauthenticated'] as const);
  if (challenge === null || !(await store.consumeChallenge(s.db, challenge, purposes, userId, nowIso()))) {
    if (
      !reauthenticated &&
      challenge !== null &&
      (await store.hasChallenge(s.db, challenge, 'register', userId, nowIso()))
    ) {
      await audit(s, { kind: 'mfa_enrol', outcome: 'failure', userId, client, detail: 'passkey: password missing' });
      throw Errors.reauthenticationRequired();
    }
    throw Errors.passkeyChallenge();
  }
  const { verifyRegistrationResponse } = await webauthn();
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: web.origin,
      expectedRPID: web.rpId,
      requireUserVerification: true,
    });
  } catch (error) {
    s.log.info({ err: error }, 'passkey registration refused');
    verified = undefined;
  }
  if (verified?.verified !== true || verified.registrationInfo === undefined) {
    await audit(s, { kind: 'mfa_enrol', outcome: 'failure', userId, client, detail: 'passkey: response not verified' });
    throw Errors.passkeyRejected();
  }
  const info = verified.registrationInfo;
  const row = {
    id: newId(),
    user_id: userId,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: info.credential.transports?.join(',') ?? null,
    backed_up: info.credentialBackedUp,
    name,
    created_at: nowIso(),
    last_used_at: null,
  };
  try {
    await store.insertPasskey(s.db, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw Errors.passkeyExists();
    throw error;
  }
  await audit(s, { kind: 'mfa_enrol', outcome: 'success', userId, client, detail: `passkey ${row.id}` });
  s.securityNotice?.(userId, 'passkey', client);
  return toPasskey(row);
}

export async function deletePasskey(s: SessionServices, userId: string, id: string, client: ClientInfo): Promise<void> {
  if (!(await store.deletePasskey(s.db, userId, id))) throw Errors.passkeyNotFound();
  s.credentialsRevoked?.(userId);
  await audit(s, { kind: 'mfa_remove', outcome: 'success', userId, client, detail: `passkey ${id}` });
}

/** Request options for a passwordless login: any discoverable passkey of this site, user verification required. */
export async function loginOptions(s: SessionServices, web: WebAuthnSettings) {
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: web.rpId,
    userVerification: 'required',
    timeout: TIMEOUT_MS,
  });
  await store.storeChallenge(s.db, {
    challenge: options.challenge,
    user_id: null,
    purpose: 'login',
    expires_at: expiry(),
  });
  return options;
}

/** A checked passkey assertion: the passkey it came from, or why it was refused (and whose passkey, when known). */
export type Assertion = { ok: true; passkey: store.PasskeyRow } | { ok: false; userId: string | null; detail: string };

/**
 * Checks the browser's answer to `loginOptions`: the challenge must be one we issued and unused,
 * the credential one we know, the signature right with user verification, and the counter moving
 * forward (or 0 for synced passkeys, which do not count). Used up either way: an answer works once.
 */
export async function verifyAssertion(
  s: Pick<SessionServices, 'db' | 'log'>,
  web: WebAuthnSettings,
  credential: AuthenticationResponseJSON,
): Promise<Assertion> {
  const challenge = challengeOf(credential);
  if (challenge === null || !(await store.consumeChallenge(s.db, challenge, 'login', null, nowIso())))
    return { ok: false, userId: null, detail: 'unknown or used challenge' };
  const passkey = await store.findPasskeyByCredential(s.db, credential.id);
  if (passkey === undefined) return { ok: false, userId: null, detail: 'unknown credential' };
  const { verifyAuthenticationResponse } = await webauthn();
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: challenge,
      expectedOrigin: web.origin,
      expectedRPID: web.rpId,
      requireUserVerification: true,
      credential: {
        id: passkey.credential_id,
        publicKey: Buffer.from(passkey.public_key, 'base64url'),
        counter: passkey.counter,
        ...transportsOf(passkey),
      },
    });
  } catch (error) {
    s.log.info({ err: error }, 'passkey assertion refused');
    verified = undefined;
  }
  if (verified?.verified !== true) return { ok: false, userId: passkey.user_id, detail: 'response not verified' };
  const info = verified.authenticationInfo;
  const recorded = await store.recordPasskeyUse(
    s.db,
    passkey.id,
    passkey.counter,
    info.newCounter,
    info.credentialBackedUp,
    nowIso(),
  );
  if (!recorded) return { ok: false, userId: passkey.user_id, detail: 'used twice at once' };
  return { ok: true, passkey };
}

/** A passwordless login (verifyAssertion). Every refusal is the same 401 as a wrong password. */
export async function passkeyLogin(
  s: SessionServices,
  web: WebAuthnSettings,
  credential: AuthenticationResponseJSON,
  client: ClientInfo,
) {
  const fail = async (userId: string | null, detail: string) => {
    await audit(s, { kind: 'login', outcome: 'failure', userId, client, detail: `passkey: ${detail}` });
    return Errors.invalidCredentials();
  };
  const checked = await verifyAssertion(s, web, credential);
  if (!checked.ok) throw await fail(checked.userId, checked.detail);
  const { passkey } = checked;
  const row = await users.findUserById(s.db, passkey.user_id);
  if (row === undefined) throw await fail(passkey.user_id, 'user deleted');
  return openSession(s, row, client, `passkey ${passkey.id}`);
}
