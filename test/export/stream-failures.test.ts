import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { strFromU8, unzipSync } from 'fflate';
import { buildApp } from '../../src/app.js';
import { captureLogs } from '../helpers/logs.js';
import { FailingQueries, withFaults, type QueryMatch } from '../helpers/faults.js';
import { forEachDatabase, newSession, NO_WEB_CLIENT, type Session } from '../helpers/harness.js';
import { listening } from '../helpers/stall.js';
import { download, insertNotes, manyNotes, zipDirectory } from './support.js';

const NOTES = 300; // three pages of notes (export reads 100 at a time), so failures land mid-stream

/**
 * Issue #19: a failure inside a streamed export ends that response (cut off, never a well-formed
 * looking file) and is logged with the request id; the process keeps serving. And the original
 * crash: a note dated before 1970 made the zip library throw from a callback.
 */
forEachDatabase('export streams: failures abort the response, never the process', (ctx) => {
  let owner: Session;
  before(async () => {
    owner = await newSession(ctx.app, 'streamer');
    await insertNotes(ctx.database.db, owner.userId, manyNotes(NOTES));
  });

  /** An app on the test's database whose `failAt`-th query fitting `match` fails, logging to memory. */
  async function faultyApp(match: QueryMatch, failAt: number) {
    const faults = new FailingQueries(match, failAt);
    const logs = captureLogs('info');
    const app = await buildApp({
      config: ctx.config,
      database: withFaults(ctx.database, faults),
      logger: logs.logger,
      webRoot: NO_WEB_CLIENT,
    });
    await app.ready();
    return { app, base: await listening(app), logs, faults };
  }

  const cases: Array<{ name: string; path: string; match: QueryMatch; failAt: number; whole: (body: Buffer) => void }> =
    [
      {
        name: 'JSON export: a page of notes fails to read',
        path: '/api/export',
        match: { from: 'notes' },
        failAt: 3,
        whole: (body) => assert.equal((JSON.parse(body.toString('utf8')) as { notes: unknown[] }).notes.length, NOTES),
      },
      {
        name: 'JSON export: a version read fails',
        path: '/api/export',
        match: { from: 'note_versions' },
        failAt: 150,
        whole: (body) => assert.equal((JSON.parse(body.toString('utf8')) as { notes: unknown[] }).notes.length, NOTES),
      },
      {
        name: 'Markdown export: a page of notes fails while entries are being declared',
        path: '/api/export?format=markdown',
        match: { from: 'notes' },
        failAt: 3,
        whole: (body) => assert.equal(Object.keys(unzipSync(new Uint8Array(body))).length, NOTES),
      },
      {
        name: "Markdown export: a note's content fails to read inside the zip library's lazy entry callback",
        path: '/api/export?format=markdown',
        match: { from: 'notes', join: 'note_versions' },
        failAt: 150,
        whole: (body) => assert.equal(Object.keys(unzipSync(new Uint8Array(body))).length, NOTES),
      },
    ];

  for (const { name, path, match, failAt, whole } of cases) {
    test(`${name}: the response is cut off and logged with its request id; the next request is served`, async () => {
      const { app, base, logs, faults } = await faultyApp(match, failAt);
      try {
        const requestId = `export-fault-${failAt}-${match.from}`;
        const failed = await download(base, path, { ...owner.auth, 'x-request-id': requestId });
        assert.equal(faults.count >= failAt, true, `the failure was injected (${faults.count} matching queries)`);
        // Headers had gone out (200) before the failure; the body was then cut off, not finished.
        assert.equal(failed.status, 200);
        assert.equal(failed.complete, false, `the response was cut off (${failed.body.length} bytes received)`);
        assert.throws(() => whole(failed.body));

        // Logged before the response was cut off, so already there.
        const logged = logs.lines.filter((l) => /export stream failed/.test(l));
        assert.equal(logged.length, 1, logs.lines.join(''));
        const line = JSON.parse(logged[0]!) as { level: number; reqId: string; msg: string; err: { message: string } };
        assert.deepEqual([line.level, line.reqId, line.msg], [50, requestId, 'export stream failed; response aborted']);
        assert.match(
          line.err.message,
          /^injected failure: select \d+ from notes|^injected failure: select \d+ from note_versions/,
        );

        // The same process answers the next requests, the same export included, in full.
        const health = await download(base, '/healthz', {});
        assert.deepEqual([health.status, health.complete], [200, true]);
        const again = await download(base, path, owner.auth);
        assert.deepEqual([again.status, again.complete], [200, true]);
        whole(again.body);
      } finally {
        await app.close();
      }
    });
  }

  test('notes dated before 1970 and 1980 (and years 1 and 9999): the Markdown export is a valid zip, times clamped, front matter exact', async () => {
    const s = await newSession(ctx.app, 'ancient');
    const dates = [
      '0001-01-01T00:00:00.000Z',
      '1969-07-20T20:17:40.000Z',
      '1979-12-31T23:59:59.000Z',
      '2025-03-04T05:06:08.000Z',
      '9999-12-31T23:59:59.999Z',
    ];
    const ids = await insertNotes(
      ctx.database.db,
      s.userId,
      dates.map((at, i) => ({ title: `Dated ${i}`, content: `from ${at}`, created_at: at, updated_at: at })),
    );
    // The repro through the route too: an import dated 1975 (before 1980, after 1970).
    const imported = await ctx.app.inject({
      method: 'POST',
      url: '/api/import',
      headers: { ...s.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({
        format: 'vellum-export',
        format_version: 1,
        notes: [
          {
            id: 'x',
            title: 'Imported 1975',
            created_at: '1975-05-05T05:05:05.000Z',
            updated_at: '1975-05-05T05:05:05.000Z',
            versions: [
              {
                version: 1,
                title: 'Imported 1975',
                content: 'from 1975',
                created_at: '1975-05-05T05:05:05.000Z',
                label: null,
                restored_from: null,
              },
            ],
          },
        ],
      }),
    });
    assert.equal(imported.statusCode, 201, imported.body);

    const base = await listening(ctx.app);
    const res = await download(base, '/api/export?format=markdown', s.auth);
    assert.deepEqual([res.status, res.complete, res.headers['content-type']], [200, true, 'application/zip']);
    const files = unzipSync(new Uint8Array(res.body));
    assert.deepEqual(Object.keys(files), [
      'Dated 0.md',
      'Dated 1.md',
      'Imported 1975.md',
      'Dated 2.md',
      'Dated 3.md',
      'Dated 4.md',
    ]);
    for (const [i, at] of dates.entries()) {
      assert.equal(
        strFromU8(files[`Dated ${i}.md`]!),
        `---\ntitle: "Dated ${i}"\nid: ${ids[i]}\ncreated_at: ${at}\nupdated_at: ${at}\npinned: false\narchived: false\n---\n\nfrom ${at}`,
      );
    }
    assert.match(
      strFromU8(files['Imported 1975.md']!),
      /\ncreated_at: 1975-05-05T05:05:05.000Z\nupdated_at: 1975-05-05T05:05:05.000Z\n/,
    );
    // Entry times: clamped into what the format holds. The DOS field is local time, so only its
    // date is checked; the Unix field (UTC) is exact (yazl caps it at 2038, its signed range).
    const directory = zipDirectory(res.body);
    const min = Date.UTC(1980, 0, 1) / 1000;
    assert.deepEqual(
      directory.map((e) => e.unixTime),
      [min, min, min, min, Date.UTC(2025, 2, 4, 5, 6, 8) / 1000, 0x7fffffff],
    );
    for (const i of [0, 1, 2, 3]) assert.ok(directory[i]!.dos.startsWith('1980-01-01'), directory[i]!.dos);
    assert.ok(directory[5]!.dos.startsWith('2107-12-31'), directory[5]!.dos);

    // The JSON export carries the same times, and the service answers afterwards.
    const json = await download(base, '/api/export', s.auth);
    assert.equal(json.status, 200);
    const doc = JSON.parse(json.body.toString('utf8')) as { notes: Array<{ updated_at: string }> };
    assert.deepEqual(
      doc.notes.map((n) => n.updated_at),
      [dates[0], dates[1], '1975-05-05T05:05:05.000Z', dates[2], dates[3], dates[4]],
    );
    const again = await download(base, '/api/export?format=markdown', s.auth);
    assert.deepEqual([again.status, again.complete, again.body.equals(res.body)], [200, true, true]);
    assert.equal((await download(base, '/healthz', {})).status, 200);
  });
});
