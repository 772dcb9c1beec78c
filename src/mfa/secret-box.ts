import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Encrypts small secrets (TOTP keys) for storage; what comes out carries its own nonce and tag. */
export interface SecretBox {
  /** `owner` is bound to the result: it opens only for the same owner. */
  seal(owner: string, plain: string): string;
  /** Throws when the sealed text was changed, or sealed under another key or for another owner. */
  open(owner: string, sealed: string): string;
}

const VERSION = 'v1';

/**
 * AES-256-GCM under a key derived from configuration (MFA_SECRET, else JWT_SECRET) by HKDF, so a
 * database copy alone does not hold the TOTP secrets. The user's id is the associated data: a
 * sealed secret moved to another user's row does not open.
 */
export function createSecretBox(secret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secret, 'vellum', 'totp secret', 32));
  const seal = (aad: string, plain: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      VERSION,
      iv.toString('base64url'),
      body.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  };
  const open = (aad: string, sealed: string) => {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || iv === undefined || body === undefined || tag === undefined)
      throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  };
  return { seal, open };
}
