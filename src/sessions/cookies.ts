import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { REFRESH_TOKEN_SECONDS } from './tokens.js';

export const REFRESH_COOKIE = 'app.refresh_token';
export const EXPIRES_COOKIE = 'app.expires_at';
export const CSRF_SECRET_COOKIE = 'app.csrf_secret';
/** The refresh cookie (and the CSRF secret) travel only to the cookie routes. */
export const COOKIE_ROUTES_PATH = '/api/auth/cookie';

type CookieConfig = Pick<Config, 'production' | 'cookieDomain'>;

function baseOptions(config: CookieConfig, path: string): CookieSerializeOptions {
  return {
    path,
    sameSite: 'strict',
    secure: config.production,
    ...(config.cookieDomain === undefined ? {} : { domain: config.cookieDomain }),
  };
}

export function csrfCookieOptions(config: CookieConfig): CookieSerializeOptions {
  return { ...baseOptions(config, COOKIE_ROUTES_PATH), httpOnly: true, signed: true };
}

/** Spec §5.6: set on login, password change and refresh. */
export function setAuthCookies(
  reply: FastifyReply,
  config: CookieConfig,
  refreshToken: string,
  expiresAt: number,
): void {
  reply.setCookie(REFRESH_COOKIE, refreshToken, {
    ...baseOptions(config, COOKIE_ROUTES_PATH),
    httpOnly: true,
    maxAge: REFRESH_TOKEN_SECONDS,
  });
  reply.setCookie(EXPIRES_COOKIE, String(expiresAt), {
    ...baseOptions(config, '/'),
    httpOnly: false,
    maxAge: REFRESH_TOKEN_SECONDS,
  });
}

/** Spec §5.7: empty refresh cookie, view cookie set to now, both expiring at once. */
export function clearAuthCookies(reply: FastifyReply, config: CookieConfig): void {
  const expired = { maxAge: 0, expires: new Date(0) };
  reply.setCookie(REFRESH_COOKIE, '', { ...baseOptions(config, COOKIE_ROUTES_PATH), httpOnly: true, ...expired });
  reply.setCookie(EXPIRES_COOKIE, String(Math.floor(Date.now() / 1000)), {
    ...baseOptions(config, '/'),
    httpOnly: false,
    ...expired,
  });
}
