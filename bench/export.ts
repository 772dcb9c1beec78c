// Export benchmark (issue #19, finding 4): `npx tsx bench/export.ts [--db sqlite|postgres] [--notes 66000]`.
//
// A real listening server on a fresh database; one account with --notes notes (one version each,
// inserted in bulk). Each format is downloaded once over HTTP while another client probes
// GET /healthz back to back; prints the download time and the probes' p50/p99/max.
// PostgreSQL needs TEST_DATABASE_URL (a database the scratch databases are created from).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPasswordHasher } from '../src/passwords/password-hasher.js';
import { createScratchDatabase } from '../test/helpers/databases.js';
import { NO_WEB_CLIENT, newSession, testConfig } from '../test/helpers/harness.js';
import { healthDuring, listening, percentile } from '../test/helpers/stall.js';
import { insertNotes, manyNotes } from '../test/export/support.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    notes: { type: 'string', default: '66000' },
    formats: { type: 'string', default: 'json,markdown' },
    /** Seconds after which a download is abandoned and reported as "over the cap". */
    cap: { type: 'string', default: '300' },
    /** Also download each format once with no probes running, for the time alone. */
    alone: { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const log = (message: string) => process.stdout.write(`[export bench ${kind}] ${message}\n`);

const scratch = await createScratchDatabase(kind);
const config = testConfig(scratch.url);
const database = openDatabase(config.database);
try {
  await migrateToLatest(database.db);
  const app = await buildApp({
    config,
    database,
    logger: false,
    hasher: createPasswordHasher(),
    webRoot: NO_WEB_CLIENT,
  });
  await app.ready();
  const base = await listening(app);
  const session = await newSession(app, 'bench');
  let started = performance.now();
  await insertNotes(database.db, session.userId, manyNotes(Number(args.notes)));
  log(`${args.notes} notes inserted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const format of args.formats.split(',')) {
    const query = format === 'markdown' ? '?format=markdown' : '';
    if (args.alone) {
      // The event loop's own delay while the export runs alone: what any other request waits at least.
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      started = performance.now();
      const res = await fetch(`${base}/api/export${query}`, { headers: session.auth });
      const bytes = (await res.arrayBuffer()).byteLength;
      delay.disable();
      log(
        `${format} alone: ${res.status}, ${(bytes / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s;` +
          ` event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`,
      );
    }
    started = performance.now();
    const { result, samples } = await healthDuring(base, async () => {
      const res = await fetch(`${base}/api/export${query}`, {
        headers: session.auth,
        signal: AbortSignal.timeout(Number(args.cap) * 1000),
      });
      const bytes = (await res.arrayBuffer()).byteLength;
      return { status: res.status, bytes };
    }).catch((error: unknown) => ({
      result: { status: `abandoned (${String(error)})`, bytes: 0 },
      samples: [] as number[],
    }));
    const seconds = (performance.now() - started) / 1000;
    log(
      `${format}: ${result.status}, ${(result.bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s; /healthz ${samples.length} probes,` +
        ` p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms, max ${percentile(samples, 100).toFixed(1)} ms`,
    );
  }
  await app.close();
} finally {
  await database.close();
  await scratch.drop();
}
