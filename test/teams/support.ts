import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { bearer } from '../helpers/auth.js';
import { randomUUID } from 'node:crypto';
import { GOOD_PASSWORD, login, testHasher, uniqueName, type Session, type TestContext } from '../helpers/harness.js';

/** POST /auth/admin/invitations as `adminToken`; asserts 201 and returns the body. */
export async function invite(
  app: FastifyInstance,
  adminToken: string,
  body: { email?: string; admin?: boolean; expires_in_days?: number } = {},
) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/admin/invitations',
    headers: bearer(adminToken),
    payload: body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as {
    id: string;
    token: string;
    url: string;
    email: string | null;
    admin: boolean;
    expires_at: string;
    created_at: string;
  };
}

export function signupWith(app: FastifyInstance, invitation?: string, username = uniqueName('inv')) {
  return app.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { username, password: GOOD_PASSWORD, ...(invitation === undefined ? {} : { invitation }) },
  });
}

/** A 403 problem with this code. */
export function assertRefused(res: LightMyRequestResponse, code: string): void {
  assert.equal(res.statusCode, 403, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.json().code, code);
}

/** The audit events of this kind, newest first (GET /auth/admin/events). */
export async function auditEvents(app: FastifyInstance, adminToken: string, kind: string) {
  const res = await app.inject({ url: `/api/auth/admin/events?kind=${kind}`, headers: bearer(adminToken) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Array<{ kind: string; outcome: string; user_id: string | null; detail: string | null }>;
}

/** A new administrator, logged in: made in storage, as sign-up may be closed or invite-only here. */
export async function adminSession(ctx: TestContext): Promise<Session> {
  const username = uniqueName('admin');
  const now = new Date().toISOString();
  await ctx.database.db
    .insertInto('users')
    .values({
      id: randomUUID(),
      username,
      password_hash: await testHasher().hash(GOOD_PASSWORD),
      is_admin: true,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return login(ctx.app, username);
}
