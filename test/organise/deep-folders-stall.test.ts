import assert from 'node:assert/strict';
import http from 'node:http';
import { before, test } from 'node:test';
import { forEachDatabase, newSession, type Session } from '../helpers/harness.js';
import { assertNoStall, described, healthDuring, listening, STALL_ENV } from '../helpers/stall.js';
import { download, zipDirectory } from '../export/support.js';
import { insertChain } from './folder-fixtures.js';

/** The finding's shape: 4 folder paths 5,000 levels deep, one-letter names (made before the depth limit). */
const CHAINS = 4;
const DEPTH = 5_000;

/**
 * A GET whose body stays in its chunks until the probing is over: joining 100 MB in this process
 * (which also runs the server) is the test's own stall, not the server's.
 */
function fetchChunks(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; complete: boolean; chunks: Buffer[] }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, complete: response.complete, chunks }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Issue #37, finding 5: with 20,000 folders in 4 chains 5,000 deep, the JSON export held /healthz
 * 8.9 s and the Markdown export 18.4 s; a PROPFIND on a 5,000-name path took 2 s. Such trees can
 * no longer be made, but an account may hold one from before: its exports run whole while another
 * client's /healthz is answered and no turn of the event loop is long (helpers/stall.ts), and the long PROPFIND is answered at once.
 */
forEachDatabase(
  'exports of a tree 5,000 folders deep do not stall the service',
  (ctx) => {
    let owner: Session;
    let base: string;
    before(async () => {
      owner = await newSession(ctx.app, 'deep');
      for (let c = 0; c < CHAINS; c += 1) {
        await insertChain(
          ctx.database.db,
          owner.userId,
          Array.from({ length: DEPTH }, () => String.fromCharCode(97 + c)),
        );
      }
      base = await listening(ctx.app);
    });

    test(`JSON export of ${CHAINS} chains ${DEPTH} deep: whole, /healthz answered meanwhile`, async () => {
      const started = performance.now();
      const probed = await healthDuring(base, () => fetchChunks(base, '/api/export', owner.auth));
      const body = Buffer.concat(probed.result.chunks);
      console.log(
        `JSON export: ${(performance.now() - started).toFixed(0)} ms, ${body.length} bytes; ${described(probed)}`,
      );
      assert.deepEqual([probed.result.status, probed.result.complete], [200, true]);
      const folders = (JSON.parse(body.toString('utf8')) as { folders: string[] }).folders;
      assert.equal(folders.length, CHAINS * DEPTH);
      assert.equal(folders.at(-1), Array.from({ length: DEPTH }, () => String.fromCharCode(97 + CHAINS - 1)).join('/'));
      assertNoStall(probed, `[${ctx.kind}] JSON export of a deep tree`);
    });

    test(`Markdown export of ${CHAINS} chains ${DEPTH} deep: whole, /healthz answered meanwhile`, async () => {
      const started = performance.now();
      const probed = await healthDuring(base, () => download(base, '/api/export?format=markdown', owner.auth));
      console.log(
        `Markdown export: ${(performance.now() - started).toFixed(0)} ms, ${probed.result.body.length} bytes; ${described(probed)}`,
      );
      assert.deepEqual([probed.result.status, probed.result.complete], [200, true]);
      // An entry per level down to 32 and the empty bottom one: deeper levels are implied by its path.
      assert.equal(zipDirectory(probed.result.body).length, CHAINS * 33);
      assertNoStall(probed, `[${ctx.kind}] Markdown export of a deep tree`);
    });

    test(`PROPFIND on a ${DEPTH}-name path: 404, /healthz answered meanwhile`, async () => {
      const path = `/dav/${Array.from({ length: DEPTH }, () => 'a').join('/')}/`;
      const started = performance.now();
      const probed = await healthDuring(
        base,
        async () =>
          (await fetch(`${base}${path}`, { method: 'PROPFIND', headers: { ...owner.auth, depth: '0' } })).status,
      );
      const elapsed = performance.now() - started;
      console.log(`PROPFIND: ${elapsed.toFixed(0)} ms; ${described(probed)}`);
      assert.equal(probed.result, 404);
      assertNoStall(probed, `[${ctx.kind}] PROPFIND on a deep path`);
    });
  },
  STALL_ENV,
);
