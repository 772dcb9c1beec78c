import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * A personal access token: `vlm_`, 32 base62 characters of randomness (190 bits), and a 6-character
 * base62 CRC-32 of them. The checksum lets a typo or a made-up token be refused without a database
 * look-up, and the prefix lets secret scanners recognise a leaked one (as GitHub's `ghp_`).
 */
export const TOKEN_PREFIX = 'vlm_';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = new RegExp(`^${TOKEN_PREFIX}([0-9A-Za-z]{${BODY_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

function base62(n: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const checksum = (body: string) => base62(crc32(body), CHECKSUM_LENGTH);

export function newPersonalToken(): string {
  // Rejection sampling keeps every character uniform: bytes of 248 and above are dropped.
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(BODY_LENGTH)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return `${TOKEN_PREFIX}${body}${checksum(body)}`;
}

/** Whether the string is shaped like a personal token at all (the access layer's first question). */
export const looksLikePersonalToken = (token: string): boolean => token.startsWith(TOKEN_PREFIX);

/** A well-formed token with the right checksum; anything else is refused before any look-up. */
export function isValidPersonalToken(token: string): boolean {
  const match = SHAPE.exec(token);
  return match !== null && checksum(match[1]!) === match[2];
}

/** What is stored: the token's SHA-256 (190 random bits need no slow hash). */
export const hashPersonalToken = (token: string): string => createHash('sha256').update(token).digest('hex');
