import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { createSigner } from 'fast-jwt';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { cookie, JWT_SECRET, login, problemOf, signup, uniqueName, type Session, type TestContext } from './harness.js';

/** Helpers for the black-box auth tests (test/accounts, sessions, passwords, audit). */

export const REFRESH = 'app.refresh_token';
export const EXPIRES = 'app.expires_at';
export const CSRF_SECRET_COOKIE = 'app.csrf_secret';

const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'detail', 'code']);

/**
 * Asserts an RFC 9457 body with exactly this status and detail; type about:blank with the status
 * phrase as title (RFC 9457 §4.2.1), nothing but the standard members and `code`, and on a 401
 * the `WWW-Authenticate: Bearer` header.
 */
export function assertProblem(res: LightMyRequestResponse, status: number, detail: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = problemOf(res);
  assert.deepEqual(
    { type: body.type, title: body.title, status: body.status, detail: body.detail },
    { type: 'about:blank', title: STATUS_CODES[status], status, detail },
  );
  for (const key of Object.keys(body)) assert.ok(PROBLEM_KEYS.has(key), `unexpected problem member ${key}`);
  if (body.code !== undefined) assert.match(body.code, /^[a-z][a-z0-9_]*$/);
  if (status === 401) assert.equal(res.headers['www-authenticate'], 'Bearer');
}

export interface RawCookie {
  value: string;
  /** Attribute names lower-cased; flags are `true`. */
  attributes: Record<string, string | true>;
}

/** The Set-Cookie headers of a response, parsed as sent (no decoding), by cookie name. */
export function setCookies(res: LightMyRequestResponse): Map<string, RawCookie> {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const cookies = new Map<string, RawCookie>();
  for (const line of lines) {
    const [pair, ...attrs] = line.split(';').map((s) => s.trim());
    const eq = pair!.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const attr of attrs) {
      const i = attr.indexOf('=');
      if (i === -1) attributes[attr.toLowerCase()] = true;
      else attributes[attr.slice(0, i).toLowerCase()] = attr.slice(i + 1);
    }
    assert.ok(!cookies.has(pair!.slice(0, eq)), `cookie ${pair!.slice(0, eq)} set twice`);
    cookies.set(pair!.slice(0, eq), { value: pair!.slice(eq + 1), attributes });
  }
  return cookies;
}

/** The decoded value of a cookie the response sets, if it sets it. */
export const cookieValue = (res: LightMyRequestResponse, name: string): string | undefined => cookie(res, name)?.value;

export interface Jwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

export function decodeJwt(token: string): Jwt {
  const [header, payload] = token.split('.');
  const part = (s: string | undefined) =>
    JSON.parse(Buffer.from(s ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: part(header), payload: part(payload) };
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Claims like the service's own, for `sub`, with overrides (undefined removes a claim). */
export function claims(sub: string, type: 'access' | 'refresh' = 'access', overrides: Record<string, unknown> = {}) {
  const now = nowSeconds();
  const lifetime = type === 'access' ? 900 : 604800;
  const base: Record<string, unknown> = {
    sub,
    admin: false,
    type,
    jti: randomUUID(),
    iat: now,
    nbf: now,
    exp: now + lifetime,
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete base[key];
    else base[key] = value;
  }
  return base;
}

/** Signs arbitrary claims; defaults to the service's own secret and HS256. */
export function forgeToken(
  payload: Record<string, unknown>,
  { key = JWT_SECRET, algorithm = 'HS256' }: { key?: string; algorithm?: 'HS256' | 'HS384' | 'HS512' } = {},
): string {
  return createSigner({ key, algorithm })(payload);
}

/** An unsigned token (`alg: none`) with the given claims. */
export function unsignedToken(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface Csrf {
  token: string;
  /** The signed CSRF secret cookie value. */
  secret: string;
}

/** GET /auth/cookie/csrf with a refresh cookie; asserts success. */
export async function getCsrf(app: FastifyInstance, refreshToken: string): Promise<Csrf> {
  const res = await app.inject({ method: 'GET', url: '/api/auth/cookie/csrf', cookies: { [REFRESH]: refreshToken } });
  assert.equal(res.statusCode, 204, res.body);
  const token = res.headers['x-csrf-token'];
  assert.equal(typeof token, 'string');
  const secret = cookieValue(res, CSRF_SECRET_COOKIE);
  assert.ok(secret, 'the CSRF secret cookie is set');
  return { token: token as string, secret };
}

/** POST /auth/cookie/refresh with the given refresh cookie and CSRF pair (either may be omitted). */
export function postRefresh(
  app: FastifyInstance,
  refreshToken: string | undefined,
  csrf: Csrf | undefined,
  headers: Record<string, string> = {},
) {
  const cookies: Record<string, string> = {};
  if (refreshToken !== undefined) cookies[REFRESH] = refreshToken;
  if (csrf !== undefined) cookies[CSRF_SECRET_COOKIE] = csrf.secret;
  return app.inject({
    method: 'POST',
    url: '/api/auth/cookie/refresh',
    cookies,
    headers: { ...(csrf === undefined ? {} : { 'x-csrf-token': csrf.token }), ...headers },
  });
}

/** A full refresh (CSRF token, then refresh); returns the response. */
export async function refreshSession(app: FastifyInstance, refreshToken: string) {
  return postRefresh(app, refreshToken, await getCsrf(app, refreshToken));
}

/** A new administrator, logged in (promoted in storage: the HTTP API has no way to make one). */
export async function newAdminSession(ctx: TestContext): Promise<Session> {
  const { id, username } = await signup(ctx.app, uniqueName('admin'));
  await ctx.database.db.updateTable('users').set({ is_admin: true }).where('id', '=', id).execute();
  return login(ctx.app, username);
}

/** 401 reauthentication_required (CONTRACT.md part 3): the password asked again was missing or wrong; nothing issued. */
export function assertReauthenticationRequired(res: LightMyRequestResponse, what = ''): void {
  assert.equal(res.statusCode, 401, `${what} ${res.body}`);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.deepEqual(
    { code: res.json().code, detail: res.json().detail },
    {
      code: 'reauthentication_required',
      detail: 'Confirm it is you: this needs your password again',
    },
    what,
  );
  assert.equal(res.headers['www-authenticate'], 'Bearer');
  assert.equal(res.headers['set-cookie'], undefined, `${what}: no cookie`);
}
