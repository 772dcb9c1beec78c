import { Secret, TOTP } from 'otpauth';

/** The code an authenticator app shows for `secret` at `ms` (default: now, as Date says). */
export function totpCode(secret: string, ms = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: ms,
  });
}

export const STEP_MS = 30_000;
