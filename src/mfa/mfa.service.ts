import type { FastifyBaseLogger } from 'fastify';
import type { SecurityNotice } from '../mail/security-notice.js';
import * as users from '../accounts/user.repository.js';
import { audit } from '../audit/audit.service.js';
import type { Db } from '../db/schema.js';
import type { SecondFactorRequirement } from '../config.js';
import { nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import type { PasswordPolicy } from '../passwords/password-policy.js';
import type { ClientInfo } from '../shared/client-info.js';
import { newId } from '../shared/ids.js';
import * as store from './mfa.repository.js';
import { hashRecoveryCode, newRecoveryCode, normalizeRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes.js';
import type { SecretBox } from './secret-box.js';
import { matchStep, newTotpSecret, otpauthUrl, TOTP_CODE } from './totp.js';

/** What the second-factor functions need; app.ts builds one object for these and the account functions. */
export interface MfaServices {
  db: Db;
  /** Mails the owner about a new second factor or password, after the commit (mail/security-notice.ts). Absent in the CLI. */
  securityNotice?: SecurityNotice;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  log: FastifyBaseLogger;
  box: SecretBox;
  /**
   * After the commit of a removed factor: REQUIRE_SECOND_FACTOR may now cover the account, and its
   * open live documents are checked again (app.ts). Absent in the CLI.
   */
  credentialsRevoked?: (userId: string) => void;
}

export interface MfaStatus {
  totp: boolean;
  passkeys: number;
}

export async function mfaStatus(db: Db, userId: string): Promise<MfaStatus> {
  const [totp, passkeys] = await Promise.all([store.findTotp(db, userId), store.countPasskeys(db, userId)]);
  return { totp: totp?.confirmed_at != null, passkeys };
}

/**
 * Whether REQUIRE_SECOND_FACTOR sends this account to enrolment: it is covered (every account with
 * `all`, administrators with `admins`) and has no confirmed authenticator app and no passkey.
 * Unknown accounts are not (their routes answer for them). Reads the account as it is now.
 */
export async function enrolmentRequired(
  db: Db,
  requirement: SecondFactorRequirement,
  userId: string,
): Promise<boolean> {
  if (requirement === 'off') return false;
  const user = await users.findUserById(db, userId);
  if (user === undefined || (requirement === 'admins' && !user.is_admin)) return false;
  const status = await mfaStatus(db, userId);
  return !status.totp && status.passkeys === 0;
}

/**
 * Step 1 of enrolment, for a user who gave the password again (auth/reauthentication.service.ts):
 * a new secret that counts only once confirmed.
 */
export async function startTotp(s: MfaServices, user: { id: string; username: string }) {
  const secret = newTotpSecret();
  if (!(await store.startTotp(s.db, user.id, s.box.seal(user.id, secret), nowIso()))) throw Errors.totpEnabled();
  return { secret, otpauth_url: otpauthUrl(secret, user.username) };
}

/** Step 2: the first right code turns the factor on and hands out the recovery codes, once. */
export async function confirmTotp(s: MfaServices, userId: string, code: string, client: ClientInfo) {
  const factor = await store.findTotp(s.db, userId);
  if (factor === undefined || factor.confirmed_at !== null)
    throw factor === undefined ? Errors.totpNotStarted() : Errors.totpEnabled();
  const step = matchStep(s.box.open(userId, factor.secret), code, Date.now());
  const codes = freshRecoveryCodes(userId);
  const confirmed =
    step !== null &&
    (await s.db.transaction().execute(async (trx) => {
      if (!(await store.acceptStep(trx, userId, step, false, nowIso()))) return false;
      await store.replaceRecoveryCodes(trx, codes.rows, userId);
      return true;
    }));
  if (!confirmed) {
    await audit(s, { kind: 'mfa_enrol', outcome: 'failure', userId, client, detail: 'authenticator app: wrong code' });
    throw Errors.invalidMfaCode();
  }
  await audit(s, {
    kind: 'mfa_enrol',
    outcome: 'success',
    userId,
    client,
    detail: `authenticator app; ${RECOVERY_CODE_COUNT} recovery codes`,
  });
  s.securityNotice?.(userId, 'totp', client);
  return { recovery_codes: codes.plain };
}

/**
 * Removal and new recovery codes both ask for a current code (TOTP or recovery), after the
 * password (which the route asks for again first, auth/reauthentication.service.ts).
 */
async function confirmCode(
  s: MfaServices,
  userId: string,
  code: string,
  client: ClientInfo,
  kind: 'mfa_remove' | 'recovery_codes',
): Promise<void> {
  const factor = await store.findTotp(s.db, userId);
  if (factor?.confirmed_at == null) throw Errors.totpNotEnabled();
  if ((await checkCode(s, userId, factor.secret, code)) === null) {
    await audit(s, { kind, outcome: 'failure', userId, client, detail: 'wrong code' });
    throw Errors.invalidMfaCode();
  }
}

export async function removeTotp(s: MfaServices, userId: string, code: string, client: ClientInfo): Promise<void> {
  await confirmCode(s, userId, code, client, 'mfa_remove');
  await s.db.transaction().execute(async (trx) => {
    await store.deleteTotp(trx, userId);
    await store.deleteRecoveryCodes(trx, userId);
  });
  s.credentialsRevoked?.(userId);
  await audit(s, {
    kind: 'mfa_remove',
    outcome: 'success',
    userId,
    client,
    detail: 'authenticator app and recovery codes',
  });
}

export async function regenerateRecoveryCodes(s: MfaServices, userId: string, code: string, client: ClientInfo) {
  await confirmCode(s, userId, code, client, 'recovery_codes');
  const codes = freshRecoveryCodes(userId);
  await store.replaceRecoveryCodes(s.db, codes.rows, userId);
  await audit(s, {
    kind: 'recovery_codes',
    outcome: 'success',
    userId,
    client,
    detail: `${RECOVERY_CODE_COUNT} new recovery codes; the old ones no longer work`,
  });
  return { recovery_codes: codes.plain };
}

function freshRecoveryCodes(userId: string) {
  const plain = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const now = nowIso();
  const rows = plain.map((code) => ({
    id: newId(),
    user_id: userId,
    code_hash: hashRecoveryCode(normalizeRecoveryCode(code)!),
    created_at: now,
  }));
  return { plain, rows };
}

/**
 * Spends a code: a TOTP code whose time step is later than the last one accepted, or an unused
 * recovery code. Each is one conditional update, so a code works once even under concurrency.
 */
async function checkCode(
  s: Pick<MfaServices, 'db' | 'box'>,
  userId: string,
  sealedSecret: string,
  code: string,
): Promise<'totp' | 'recovery' | null> {
  const trimmed = code.trim();
  if (TOTP_CODE.test(trimmed)) {
    const step = matchStep(s.box.open(userId, sealedSecret), trimmed, Date.now());
    return step !== null && (await store.acceptStep(s.db, userId, step, true, nowIso())) ? 'totp' : null;
  }
  const recovery = normalizeRecoveryCode(trimmed);
  if (recovery === null) return null;
  return (await store.useRecoveryCode(s.db, userId, hashRecoveryCode(recovery), nowIso())) ? 'recovery' : null;
}

/**
 * The second step of a password login. 'none': the account has no second factor. 'missing': it
 * has one and no code came. Otherwise the kind of code that was accepted, or 'wrong'.
 */
export async function checkLoginCode(
  s: Pick<MfaServices, 'db' | 'box'>,
  userId: string,
  code: string | undefined,
): Promise<'none' | 'missing' | 'wrong' | 'totp' | 'recovery'> {
  const factor = await store.findTotp(s.db, userId);
  if (factor?.confirmed_at == null) return 'none';
  if (code === undefined || code === '') return 'missing';
  return (await checkCode(s, userId, factor.secret, code)) ?? 'wrong';
}

/** An administrator removes every second factor of a user (a lost phone and lost codes). */
export async function adminRemoveFactors(
  s: MfaServices,
  actorId: string | null,
  userId: string,
  client: ClientInfo,
): Promise<void> {
  const user = await users.findUserById(s.db, userId);
  if (user === undefined) {
    await audit(s, {
      kind: 'admin_remove_mfa',
      outcome: 'failure',
      userId: actorId,
      client,
      detail: `user ${userId} not found`,
    });
    throw Errors.userNotFound();
  }
  const passkeys = await s.db.transaction().execute(async (trx) => {
    await store.deleteTotp(trx, userId);
    await store.deleteRecoveryCodes(trx, userId);
    return store.deletePasskeys(trx, userId);
  });
  s.credentialsRevoked?.(userId);
  await audit(s, {
    kind: 'admin_remove_mfa',
    outcome: 'success',
    userId: actorId,
    client,
    detail: `user ${userId}: authenticator app, recovery codes and ${passkeys} passkeys removed`,
  });
}
