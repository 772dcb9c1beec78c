/** The longest address SMTP carries (RFC 5321: a 254-character path). */
export const EMAIL_MAX_LENGTH = 254;

/**
 * One `@`, something on each side, a dot in the domain, no spaces or control characters: enough to
 * refuse a typo. Whether the address is real is what the confirmation mail proves.
 */
const EMAIL_PATTERN = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/** Addresses are compared and stored lower-cased (the domain is case-insensitive, and in practice the local part too). */
export function normalizeEmail(value: string): string | null {
  const email = value.trim().toLowerCase();
  return email.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(email) ? email : null;
}
