import { Errors } from '../errors.js';
import { isUuid } from './ids.js';

export type TokenType = 'access' | 'refresh';

/**
 * What a verified token says: signed and verified in sessions/tokens.ts, put on the request by the
 * access layer (http/access.ts), read by routes and services. Here, below all three, so that none
 * of them imports another for it.
 */
export interface Claims {
  sub: string;
  admin: boolean;
  type: TokenType;
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
}

/** The user id a token names; a sub that is not a UUID is 400 Invalid user ID (spec). */
export function requireUserId(claims: Claims): string {
  if (!isUuid(claims.sub)) throw Errors.invalidUserId();
  return claims.sub.toLowerCase();
}

/** The user id a token names, or null when its sub is not a UUID (recorded as an unknown actor). */
export const subjectOf = (claims: Claims): string | null => (isUuid(claims.sub) ? claims.sub.toLowerCase() : null);
