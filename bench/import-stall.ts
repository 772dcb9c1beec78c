/**
 * POST /api/import of a 64 MiB document while another client probes /healthz (issue #19, finding 3).
 * Usage: tsx bench/import-stall.ts sqlite|postgres hostile|valid
 * Prints the status, the time to answer, /healthz p50/p99/max and the process's peak RSS (VmHWM).
 */
import fs from 'node:fs';
import http from 'node:http';
import { createScratchDatabase } from '../test/helpers/databases.js';
import { buildTestApp, newSession, testConfig } from '../test/helpers/harness.js';
import { healthDuring, listening, percentile } from '../test/helpers/stall.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

const [kind = 'sqlite', mode = 'hostile'] = process.argv.slice(2) as ['sqlite' | 'postgres', string];
const LIMIT = 64 * 1024 * 1024;

function hostileDocument(): Buffer {
  const head =
    '{"format":"vellum-export","format_version":1,"exported_at":"2026-01-01T00:00:00.000Z","username":"x","notes":[';
  const count = Math.floor((LIMIT - head.length - 1) / 3);
  return Buffer.concat([Buffer.from(head), Buffer.alloc(count * 3 - 1, '{},'), Buffer.from(']}')]);
}

function validDocument(): Buffer {
  const content = 'lorem ipsum dolor sit amet '.repeat(600); // ~16 KiB
  const notes = [];
  for (let i = 0; i < 3000; i++) {
    notes.push({
      id: 'x',
      title: `Note ${i}`,
      created_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-01T00:00:00.000Z',
      versions: [
        {
          version: 1,
          title: `Note ${i}`,
          content: `${i} ${content}`,
          created_at: '2025-01-01T00:00:00.000Z',
          label: null,
          restored_from: null,
        },
      ],
    });
  }
  return Buffer.from(
    JSON.stringify({
      format: 'vellum-export',
      format_version: 1,
      exported_at: '2026-01-01T00:00:00.000Z',
      username: 'x',
      notes,
    }),
  );
}

const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

const scratch = await createScratchDatabase(kind);
const config = testConfig(scratch.url);
const database = openDatabase(config.database);
await migrateToLatest(database.db);
const app = await buildTestApp(config, database);
try {
  const session = await newSession(app);
  const base = await listening(app);
  const body = mode === 'hostile' ? hostileDocument() : validDocument();
  const rssBefore = peakRss();
  const started = performance.now();
  const { result, samples, p99 } = await healthDuring(
    base,
    () =>
      new Promise<{ status: number; text: string; ms: number }>((resolve, reject) => {
        const request = http.request(
          `${base}/api/import`,
          {
            method: 'POST',
            agent: false,
            headers: { ...session.auth, 'content-type': 'application/json', 'content-length': body.length },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk) => {
              text += chunk;
            });
            response.on('end', () =>
              resolve({ status: response.statusCode!, text: text.slice(0, 200), ms: performance.now() - started }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      }),
  );
  console.log(
    JSON.stringify({
      kind,
      mode,
      bytes: body.length,
      status: result.status,
      body: result.text,
      answerMs: Math.round(result.ms),
      healthz: {
        n: samples.length,
        p50: Math.round(percentile(samples, 50)),
        p99: Math.round(p99),
        max: Math.round(Math.max(...samples)),
      },
      peakRssMiB: { before: Math.round(rssBefore), after: Math.round(peakRss()) },
    }),
  );
} finally {
  await app.close();
  await database.close();
  await scratch.drop();
}
