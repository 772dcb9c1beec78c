import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { pruneAuditEvents } from '../../src/audit/retention.js';
import { pruneDeadRefreshTokens } from '../../src/sessions/retention.js';
import { maintenanceTasks } from '../../src/jobs/tasks.js';
import { loadConfig } from '../../src/config.js';
import { forEachDatabase, newSession } from '../helpers/harness.js';

forEachDatabase('auth retention', (ctx) => {
  test('audit events older than AUDIT_RETENTION_DAYS are deleted at the injected time, newer ones kept', async () => {
    const now = new Date('2030-06-01T00:00:00.000Z');
    const day = 86_400_000;
    const tag = `retention-${randomUUID()}`;
    const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * day).toISOString();
    await ctx.database.db
      .insertInto('auth_events')
      .values([
        {
          id: randomUUID(),
          kind: 'login',
          outcome: 'failure',
          user_id: null,
          username: tag,
          ip_address: null,
          user_agent: null,
          detail: 'old',
          created_at: at(91),
        },
        {
          id: randomUUID(),
          kind: 'login',
          outcome: 'failure',
          user_id: null,
          username: tag,
          ip_address: null,
          user_agent: null,
          detail: 'edge',
          created_at: at(89),
        },
        {
          id: randomUUID(),
          kind: 'login',
          outcome: 'failure',
          user_id: null,
          username: tag,
          ip_address: null,
          user_agent: null,
          detail: 'new',
          created_at: at(1),
        },
      ])
      .execute();
    const summary = await pruneAuditEvents(ctx.database.db, now, { auditRetentionDays: 90 });
    assert.ok(summary.events >= 1);
    const left = await ctx.database.db
      .selectFrom('auth_events')
      .select('detail')
      .where('username', '=', tag)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      left.map((r) => r.detail),
      ['edge', 'new'],
    );
    assert.deepEqual(await pruneAuditEvents(ctx.database.db, now, { auditRetentionDays: 90 }), { events: 0 });
  });

  test("dead refresh tokens are pruned; a live session's tokens stay", async () => {
    const session = await newSession(ctx.app);
    const count = () =>
      ctx.database.db.selectFrom('refresh_tokens').select('id').where('user_id', '=', session.userId).execute();
    assert.equal((await count()).length, 1);
    await pruneDeadRefreshTokens(ctx.database.db, new Date());
    assert.equal((await count()).length, 1);
    // A year later every token has expired.
    await pruneDeadRefreshTokens(ctx.database.db, new Date(Date.now() + 365 * 86_400_000));
    assert.equal((await count()).length, 0);
  });

  test('both are registered with the maintenance runner', () => {
    const names = maintenanceTasks(loadConfig({})).map((t) => t.name);
    assert.ok(names.includes('audit-retention'));
    assert.ok(names.includes('refresh-token-prune'));
  });
});
