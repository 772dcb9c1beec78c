import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { bearer } from '../helpers/auth.js';
import { GOOD_PASSWORD, login, signup, uniqueName, type Session } from '../helpers/harness.js';

import { totpCode } from '../helpers/totp.js';

export { STEP_MS, totpCode } from '../helpers/totp.js';

export function post(app: FastifyInstance, url: string, token: string | undefined, payload?: unknown) {
  return app.inject({
    method: 'POST',
    url,
    headers: token === undefined ? {} : bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export function del(app: FastifyInstance, url: string, token: string, payload?: unknown) {
  return app.inject({
    method: 'DELETE',
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export function loginWith(app: FastifyInstance, username: string, code?: string, password = GOOD_PASSWORD) {
  return app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password, ...(code === undefined ? {} : { code }) },
  });
}

export interface Enrolled extends Session {
  secret: string;
  recoveryCodes: string[];
}

/** A new user with an authenticator app set up and confirmed (with the code of the current step). */
export async function enrolledUser(app: FastifyInstance): Promise<Enrolled> {
  const { username } = await signup(app, uniqueName('mfa'));
  const session = await login(app, username);
  const start = await post(app, '/api/auth/2fa/totp', session.accessToken, { password: GOOD_PASSWORD });
  assert.equal(start.statusCode, 200, start.body);
  const { secret } = start.json() as { secret: string };
  const confirm = await post(app, '/api/auth/2fa/totp/confirm', session.accessToken, { code: totpCode(secret) });
  assert.equal(confirm.statusCode, 200, confirm.body);
  return { ...session, secret, recoveryCodes: (confirm.json() as { recovery_codes: string[] }).recovery_codes };
}

export function assertMfaRequired(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.json().code, 'mfa_required');
  assert.equal(res.headers['set-cookie'], undefined, 'no cookie before the second factor');
  assert.equal(res.json().access_token, undefined);
}

export function assertWrongCode(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.deepEqual(
    { code: res.json().code, detail: res.json().detail },
    { code: 'invalid_mfa_code', detail: 'That code is wrong or was already used' },
  );
  assert.equal(res.headers['set-cookie'], undefined);
}
