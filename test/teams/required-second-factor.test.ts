import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { bearer } from '../helpers/auth.js';
import { forEachDatabase, GOOD_PASSWORD, newSession, type Session } from '../helpers/harness.js';
import { totpCode } from '../helpers/totp.js';
import { Stream } from '../helpers/event-stream.js';
import { until } from '../helpers/until.js';
import { adminSession } from './support.js';
import { connect, listening, sharedNote } from '../collab/support.js';

function assertEnrolmentRequired(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
  assert.equal(res.json().code, 'mfa_enrolment_required', what);
}

const me = async (app: FastifyInstance, user: Session) => {
  const res = await app.inject({ url: '/api/auth/me', headers: user.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { mfa_enrolment_required: boolean; is_admin: boolean };
};

/** Sets up the authenticator app through the routes an account waiting for enrolment may use. */
async function enrol(app: FastifyInstance, user: Session): Promise<void> {
  const start = await app.inject({
    method: 'POST',
    url: '/api/auth/2fa/totp',
    headers: user.auth,
    payload: { password: GOOD_PASSWORD },
  });
  assert.equal(start.statusCode, 200, start.body);
  const confirm = await app.inject({
    method: 'POST',
    url: '/api/auth/2fa/totp/confirm',
    headers: user.auth,
    payload: { code: totpCode(start.json().secret) },
  });
  assert.equal(confirm.statusCode, 200, confirm.body);
}

/** Routes a covered account cannot reach before enrolment: notes, its sessions, tokens, WebDAV, events. */
const ELSEWHERE = [
  ['GET', '/api/notes'],
  ['POST', '/api/notes'],
  ['GET', '/api/auth/sessions'],
  ['GET', '/api/auth/tokens'],
  ['GET', '/api/folders'],
  ['PROPFIND', '/dav/'],
] as const;

forEachDatabase(
  'REQUIRE_SECOND_FACTOR=all',
  (ctx) => {
    test('a covered account without a factor signs in, is told to enrol, and reaches only enrolment, /me, logout and /config', async () => {
      const user = await newSession(ctx.app, 'rsf');
      assert.equal((await me(ctx.app, user)).mfa_enrolment_required, true);
      for (const [method, url] of ELSEWHERE) {
        const res = await ctx.app.inject({
          method,
          url,
          headers: { ...user.auth, ...(method === 'PROPFIND' ? { depth: '0' } : {}) },
          ...(method === 'POST' ? { payload: { title: 'x', content: 'y' } } : {}),
        });
        assertEnrolmentRequired(res, `${method} ${url}`);
      }
      assert.equal((await ctx.app.inject({ url: '/api/auth/config' })).statusCode, 200);
      assert.equal((await ctx.app.inject({ url: '/api/auth/passkeys', headers: user.auth })).statusCode, 200);

      await enrol(ctx.app, user);
      assert.equal((await me(ctx.app, user)).mfa_enrolment_required, false);
      assert.equal((await ctx.app.inject({ url: '/api/notes', headers: user.auth })).statusCode, 200);
      assert.equal((await ctx.app.inject({ url: '/api/auth/sessions', headers: user.auth })).statusCode, 200);
    });

    test('live co-editing (/api/collab) is refused until a factor is set up, like every other route', async () => {
      const owner = await newSession(ctx.app, 'rsfowner');
      await enrol(ctx.app, owner);
      const editor = await newSession(ctx.app, 'rsfeditor');
      const noteId = await sharedNote(ctx.app, owner, editor);
      assertEnrolmentRequired(
        await ctx.app.inject({ url: `/api/notes/${noteId}`, headers: editor.auth }),
        'GET the shared note',
      );

      const url = await listening(ctx.app);
      const refused = connect(url, noteId, editor.accessToken);
      try {
        assert.equal(await refused.ready, false, 'no live document before enrolment');
        assert.equal(refused.refusedReason(), 'mfa_enrolment_required');
        assert.equal(refused.content.toString(), '', 'nothing of the note was sent');
      } finally {
        refused.destroy();
      }

      await enrol(ctx.app, editor);
      const admitted = connect(url, noteId, editor.accessToken);
      try {
        assert.equal(await admitted.ready, true, 'admitted once a factor is set up');
        assert.equal(admitted.content.toString(), 'text\n');
      } finally {
        admitted.destroy();
      }
    });

    test('an open live document and event stream close when their account loses its last factor', async () => {
      const owner = await newSession(ctx.app, 'rsflost');
      await enrol(ctx.app, owner);
      const editor = await newSession(ctx.app, 'rsflosted');
      await enrol(ctx.app, editor);
      const noteId = await sharedNote(ctx.app, owner, editor);
      const url = await listening(ctx.app);
      const editing = connect(url, noteId, editor.accessToken);
      const owning = connect(url, noteId, owner.accessToken);
      const base = url.replace(/^ws/, 'http').replace(/\/api\/collab$/, '');
      const events = await Stream.open(base, editor.accessToken);
      const ownerEvents = await Stream.open(base, owner.accessToken);
      try {
        assert.equal(events.status, 200);
        assert.equal(await editing.ready, true);
        assert.equal(await owning.ready, true);
        // An administrator removes the editor's factors (a lost phone): REQUIRE_SECOND_FACTOR covers
        // the account again, and its open document is closed as its other routes are refused.
        const admin = await adminSession(ctx);
        await enrol(ctx.app, admin);
        const removed = await ctx.app.inject({
          method: 'DELETE',
          url: `/api/auth/admin/${editor.userId}/mfa`,
          headers: admin.auth,
        });
        assert.equal(removed.statusCode, 204, removed.body);
        await until(() => editing.closedReason() === 'Unauthorized', 'the editor’s live document closed');
        await until(() => events.ended, 'the editor’s event stream ended');
        assert.equal(owning.closedReason(), undefined, 'the owner keeps editing');
        assert.equal(ownerEvents.ended, false, 'the owner’s stream stays');
        const refused = await fetch(`${base}/api/events`, { headers: editor.auth });
        assert.equal(refused.status, 403);
        assert.equal(((await refused.json()) as { code: string }).code, 'mfa_enrolment_required');
        const again = connect(url, noteId, editor.accessToken);
        try {
          assert.equal(await again.ready, false);
          assert.equal(again.refusedReason(), 'mfa_enrolment_required');
        } finally {
          again.destroy();
        }
      } finally {
        editing.destroy();
        owning.destroy();
        events.close();
        ownerEvents.close();
      }
    });

    test('logout stays open to an account waiting for enrolment', async () => {
      const user = await newSession(ctx.app, 'rsfout');
      const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers: user.auth });
      assert.equal(res.statusCode, 204, res.body);
    });
  },
  { REQUIRE_SECOND_FACTOR: 'all' },
);

forEachDatabase(
  'REQUIRE_SECOND_FACTOR=admins',
  (ctx) => {
    test('administrators without a factor are sent to enrolment, the admin routes included; others are not', async () => {
      const user = await newSession(ctx.app, 'rsfuser');
      assert.equal((await me(ctx.app, user)).mfa_enrolment_required, false);
      assert.equal((await ctx.app.inject({ url: '/api/notes', headers: user.auth })).statusCode, 200);

      const admin = await adminSession(ctx);
      assert.equal((await me(ctx.app, admin)).mfa_enrolment_required, true);
      assertEnrolmentRequired(
        await ctx.app.inject({ url: '/api/auth/admin/all', headers: bearer(admin.accessToken) }),
        'GET /auth/admin/all',
      );
      assertEnrolmentRequired(await ctx.app.inject({ url: '/api/notes', headers: admin.auth }), 'GET /api/notes');
      await enrol(ctx.app, admin);
      assert.equal((await ctx.app.inject({ url: '/api/auth/admin/all', headers: admin.auth })).statusCode, 200);
    });
  },
  { REQUIRE_SECOND_FACTOR: 'admins' },
);

forEachDatabase('REQUIRE_SECOND_FACTOR=off (the default)', (ctx) => {
  test('nobody is sent to enrolment', async () => {
    const admin = await adminSession(ctx);
    assert.equal((await me(ctx.app, admin)).mfa_enrolment_required, false);
    assert.equal((await ctx.app.inject({ url: '/api/auth/admin/all', headers: admin.auth })).statusCode, 200);
  });
});
