import { createHash } from 'node:crypto';
import { Secret } from 'otpauth';

export const RECOVERY_CODE_COUNT = 10;

/**
 * 120 random bits each, shown as six groups of four base32 letters and digits. With that much
 * entropy a plain SHA-256 is enough at rest (no guessing attack on the hash is feasible, which is
 * why Argon2id would only be needed below 112 bits) and a code is found with one index look-up.
 */
export function newRecoveryCode(): string {
  return new Secret({ size: 15 }).base32.toLowerCase().match(/.{4}/g)!.join('-');
}

/** What a user types, without case, spaces or dashes; null when it cannot be a recovery code. */
export function normalizeRecoveryCode(input: string): string | null {
  const compact = input.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z2-7]{24}$/.test(compact) ? compact : null;
}

export function hashRecoveryCode(normalized: string): string {
  return createHash('sha256').update(normalized).digest('hex');
}
