import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { assertProblem, bearer, getCsrf, newAdminSession, postRefresh, refreshSession } from '../helpers/auth.js';
import { buildTestApp, forEachDatabase, GOOD_PASSWORD, newSession, problemOf } from '../helpers/harness.js';

/** Spec §7's 500s: each named storage step fails, and the answer names it without internal text. */

type Kind = 'InsertQueryNode' | 'UpdateQueryNode' | 'DeleteQueryNode' | 'SelectQueryNode';

/**
 * Makes every query of one kind on one table throw, as a broken disk or a lost constraint would,
 * while `failing` names them (one app on it for the file: building an app per case cost ~0.4 CPU-s).
 */
class FailingPlugin implements KyselyPlugin {
  failing: { kind: Kind; table: string } | undefined;

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (this.failing === undefined) return node;
    const { kind, table } = this.failing;
    const n = node as unknown as { kind: string; into?: unknown; table?: unknown; from?: { froms?: unknown[] } };
    const target = (n.into ?? n.table ?? n.from?.froms?.[0]) as
      | { table?: { identifier?: { name?: string } } }
      | undefined;
    if (n.kind === kind && target?.table?.identifier?.name === table) {
      throw new Error(`injected failure: ${kind} on ${table} (internal detail)`);
    }
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

forEachDatabase('storage failures', (ctx) => {
  /** An app on the same data whose queries of `kind` on `table` fail during `body` (and only then). */
  const plugin = new FailingPlugin();
  let failingApp: FastifyInstance | undefined;
  after(async () => {
    await failingApp?.close();
  });
  async function withFailing(kind: Kind, table: string, body: (app: FastifyInstance) => Promise<void>): Promise<void> {
    failingApp ??= await buildTestApp(ctx.config, {
      ...ctx.database,
      db: ctx.database.db.withPlugin(plugin),
      close: async () => {},
    });
    plugin.failing = { kind, table };
    try {
      await body(failingApp);
    } finally {
      plugin.failing = undefined;
    }
  }

  const assert500 = (res: Awaited<ReturnType<FastifyInstance['inject']>>, detail: string) => {
    assertProblem(res, 500, detail);
    assert.doesNotMatch(res.body, /injected|internal detail/);
  };

  test('signup: Failed to create user', async () => {
    await withFailing('InsertQueryNode', 'users', async (app) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/signup',
        payload: { username: 'failing-signup', password: GOOD_PASSWORD },
      });
      assert500(res, 'Failed to create user');
    });
  });

  test('login: Failed to generate tokens', async () => {
    const s = await newSession(ctx.app);
    await withFailing('InsertQueryNode', 'refresh_tokens', async (app) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: s.username, password: s.password },
      });
      assert500(res, 'Failed to generate tokens');
      assert.equal(res.headers['set-cookie'], undefined);
    });
  });

  test('password change: Failed to update password, and nothing changes', async () => {
    const s = await newSession(ctx.app);
    await withFailing('UpdateQueryNode', 'users', async (app) => {
      const res = await app.inject({
        method: 'PUT',
        url: '/api/auth/owner/',
        headers: s.auth,
        payload: { old_password: s.password, new_password: 'amber-Falcon-meadow-77-softly-x' },
      });
      assert500(res, 'Failed to update password');
    });
    assert.equal((await refreshSession(ctx.app, s.refreshToken)).statusCode, 200, 'the session survives');
  });

  test('own deletion and admin deletion: Failed to delete user', async () => {
    const admin = await newAdminSession(ctx);
    const s = await newSession(ctx.app);
    await withFailing('DeleteQueryNode', 'users', async (app) => {
      assert500(
        await app.inject({
          method: 'DELETE',
          url: '/api/auth/owner/',
          headers: s.auth,
          payload: { password: s.password },
        }),
        'Failed to delete user',
      );
      assert500(
        await app.inject({ method: 'DELETE', url: `/api/auth/admin/${s.userId}`, headers: admin.auth }),
        'Failed to delete user',
      );
    });
  });

  test('deletion goes on when revoking the refresh tokens fails (spec §3.1: only logged)', async () => {
    const admin = await newAdminSession(ctx);
    const [a, b] = [await newSession(ctx.app), await newSession(ctx.app)];
    await withFailing('UpdateQueryNode', 'refresh_tokens', async (app) => {
      assert.equal(
        (
          await app.inject({
            method: 'DELETE',
            url: '/api/auth/owner',
            headers: a.auth,
            payload: { password: a.password },
          })
        ).statusCode,
        204,
      );
      assert.equal(
        (await app.inject({ method: 'DELETE', url: `/api/auth/admin/${b.userId}`, headers: admin.auth })).statusCode,
        204,
      );
    });
    for (const s of [a, b]) assertProblem(await refreshSession(ctx.app, s.refreshToken), 401, 'Invalid refresh token');
  });

  test('admin list: Failed to retrieve users', async () => {
    const admin = await newAdminSession(ctx);
    await withFailing('SelectQueryNode', 'users', async (app) => {
      assert500(
        await app.inject({ method: 'GET', url: '/api/auth/admin/all', headers: bearer(admin.accessToken) }),
        'Failed to retrieve users',
      );
    });
  });

  test('logout: Failed to logout', async () => {
    const s = await newSession(ctx.app);
    await withFailing('UpdateQueryNode', 'refresh_tokens', async (app) => {
      assert500(await app.inject({ method: 'POST', url: '/api/auth/logout', headers: s.auth }), 'Failed to logout');
    });
  });

  test('refresh: Failed to revoke token when the old token cannot be revoked (rule 9.4)', async () => {
    const s = await newSession(ctx.app);
    const csrf = await getCsrf(ctx.app, s.refreshToken);
    await withFailing('UpdateQueryNode', 'refresh_tokens', async (app) => {
      assert500(await postRefresh(app, s.refreshToken, csrf), 'Failed to revoke token');
    });
  });

  test('refresh: Failed to generate tokens when the new pair cannot be stored (rule 9.6)', async () => {
    const s = await newSession(ctx.app);
    const csrf = await getCsrf(ctx.app, s.refreshToken);
    await withFailing('InsertQueryNode', 'refresh_tokens', async (app) => {
      assert500(await postRefresh(app, s.refreshToken, csrf), 'Failed to generate tokens');
    });
  });

  test('refresh: a failure while checking a spent token for reuse is a plain 500, not "Failed to generate tokens"', async () => {
    const s = await newSession(ctx.app);
    const csrf = await getCsrf(ctx.app, s.refreshToken);
    assert.equal((await postRefresh(ctx.app, s.refreshToken, csrf)).statusCode, 200);
    await withFailing('SelectQueryNode', 'refresh_tokens', async (app) => {
      const res = await postRefresh(app, s.refreshToken, csrf);
      assert500(res, 'Internal Server Error');
      assert.equal(problemOf(res).code, 'internal_error');
    });
  });
});
