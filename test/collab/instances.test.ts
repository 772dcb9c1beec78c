import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, forEachDatabase, newSession } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { connect, listening, type Client } from './support.js';

const redisUrl = process.env.TEST_REDIS_URL;

forEachDatabase(
  'live co-editing across two instances (Redis)',
  (ctx) => {
    if (redisUrl === undefined) return;
    test('two instances sharing the database and Redis edit one note: edits, saves and versions, each once', async () => {
      const config = { ...ctx.config, redisUrl: redisUrl!, redisKeyPrefix: `test-collab-${Date.now()}:` };
      const apps: FastifyInstance[] = [
        await buildTestApp(config, ctx.database),
        await buildTestApp(config, ctx.database),
      ];
      const clients: Client[] = [];
      try {
        const [urlA, urlB] = [await listening(apps[0]!), await listening(apps[1]!)];
        const owner = await newSession(apps[0]!, 'two');
        const carol = await newSession(apps[0]!, 'twc');
        const created = await apps[0]!.inject({
          method: 'POST',
          url: '/api/notes',
          headers: owner.auth,
          payload: { title: 'Both', content: 'one\ntwo\n' },
        });
        const id = created.json().id as string;
        const shared = await apps[0]!.inject({
          method: 'POST',
          url: `/api/notes/${id}/members`,
          headers: owner.auth,
          payload: { username: carol.username, role: 'editor' },
        });
        assert.equal(shared.statusCode, 201, shared.body);
        const a = connect(urlA, id, owner.accessToken);
        const c = connect(urlB, id, carol.accessToken);
        clients.push(a, c);
        assert.equal(await a.ready, true);
        assert.equal(await c.ready, true);
        assert.equal(c.content.toString(), 'one\ntwo\n');
        a.content.insert(0, 'A ');
        await until(() => c.content.toString() === 'A one\ntwo\n', 'the edit on the other instance');
        c.content.insert(c.content.length, 'carol\n');
        await until(() => a.content.toString() === 'A one\ntwo\ncarol\n', 'the edit back');
        // An API save on one instance reaches both clients, applied once (not once per instance).
        const saved = await apps[1]!.inject({
          method: 'POST',
          url: `/api/notes/${id}/versions?merge=true`,
          headers: { ...owner.auth, 'if-match': '"1"' },
          payload: { title: 'Both', content: 'one\nTWO\n' },
        });
        assert.ok(saved.statusCode < 300, saved.body);
        const expected = 'A one\nTWO\ncarol\n';
        await until(
          () => a.content.toString() === expected && c.content.toString() === expected,
          `the save on both instances: ${JSON.stringify([a.content.toString(), c.content.toString()])}`,
        );
        for (const client of clients) client.destroy();
        await until(() => apps.every((app) => app.collab.documentCount === 0), 'both documents unloaded');
        const note = (await apps[0]!.inject({ method: 'GET', url: `/api/notes/${id}`, headers: owner.auth })).json();
        assert.equal(note.content, expected);
        const versions = (
          await apps[0]!.inject({ method: 'GET', url: `/api/notes/${id}/versions`, headers: owner.auth })
        ).json() as { id: string }[];
        // No version twice: every version differs from the one before it.
        const texts = await Promise.all(
          versions.map(async (v) =>
            (await apps[0]!.inject({ method: 'GET', url: `/api/notes/${id}/${v.id}`, headers: owner.auth })).json(),
          ),
        );
        for (let i = 1; i < texts.length; i += 1) assert.notEqual(texts[i - 1].content, texts[i].content);
        const authors = new Set(texts.flatMap((v) => v.authors as string[]));
        assert.ok(authors.has(owner.username) && authors.has(carol.username), JSON.stringify([...authors]));
      } finally {
        for (const client of clients) client.destroy();
        for (const app of apps) await app.close();
      }
    });
  },
  { COLLAB_IDLE_SECONDS: '0.3' },
);
