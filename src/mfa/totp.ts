import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as the contract fixes it, and as every authenticator app defaults to. */
const PERIOD = 30;
const DIGITS = 6;
const ISSUER = 'Vellum';

export const TOTP_CODE = /^\d{6}$/;

/** 160 random bits, the RFC 4226 recommendation for SHA-1; base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

export function otpauthUrl(secretBase32: string, username: string): string {
  return totp(secretBase32, username).toString();
}

/**
 * The time step the code belongs to, if it is the code of the step at `nowMs` or of one step
 * either side (clock drift); otherwise null. The caller refuses steps already used.
 */
export function matchStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!TOTP_CODE.test(code)) return null;
  const delta = totp(secretBase32).validate({ token: code, timestamp: nowMs, window: 1 });
  return delta === null ? null : TOTP.counter({ period: PERIOD, timestamp: nowMs }) + delta;
}
