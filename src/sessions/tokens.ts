import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Claims, TokenType } from '../shared/claims.js';

/** Claims and the caller's id live in shared/claims.ts (the access layer and services read them too); re-exported for older importers. */
export { requireUserId, subjectOf } from '../shared/claims.js';
export type { Claims, TokenType } from '../shared/claims.js';

export const ACCESS_TOKEN_SECONDS = 15 * 60;
export const REFRESH_TOKEN_SECONDS = 7 * 24 * 60 * 60;

export interface SignedToken {
  token: string;
  claims: Claims;
}

export interface TokenService {
  sign(type: TokenType, subject: { userId: string; admin: boolean }, jti?: string): SignedToken;
  /** The verified claims of a well-formed token, or null; callers check the type they need. */
  verify(token: string): Claims | null;
}

/** HS256 only, both ways; exp and nbf are enforced by the verifier. */
export function createTokenService(secret: string): TokenService {
  const signer = createSigner({ key: secret, algorithm: 'HS256' });
  const verifier = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'type', 'exp', 'iat', 'nbf', 'jti'],
    // A client sends one access token many times in its 15 minutes: a hit skips decoding and the
    // HMAC. An entry never outlives the token's exp, nbf is still checked, failures are not kept.
    cache: 1024,
  });

  return {
    sign(type, { userId, admin }, jti = randomUUID()) {
      const now = Math.floor(Date.now() / 1000);
      const lifetime = type === 'access' ? ACCESS_TOKEN_SECONDS : REFRESH_TOKEN_SECONDS;
      const claims: Claims = { sub: userId, admin, type, jti, iat: now, nbf: now, exp: now + lifetime };
      return { token: signer(claims), claims };
    },
    verify(token) {
      let payload: unknown;
      try {
        payload = verifier(token);
      } catch {
        return null;
      }
      return isClaims(payload) ? payload : null;
    },
  };
}

function isClaims(value: unknown): value is Claims {
  const c = value as Partial<Claims> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.sub === 'string' &&
    typeof c.admin === 'boolean' &&
    (c.type === 'access' || c.type === 'refresh') &&
    typeof c.jti === 'string' &&
    typeof c.iat === 'number' &&
    typeof c.nbf === 'number' &&
    typeof c.exp === 'number'
  );
}
