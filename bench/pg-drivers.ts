// PostgreSQL driver comparison: `npx tsx bench/pg-drivers.ts [--seconds 5] [--concurrency 10] [--rounds 3]`
//
// The note read (the hot query) in-process, through Kysely, on a fresh database made from
// BENCH_DATABASE_URL: node-postgres as before #10 (query built each call, unnamed statement, no
// type parsers), node-postgres as now (compiled once, named prepared statement, type parsers:
// src/db/postgres.ts), and postgres.js through kysely-postgres-js (compiled once, its own prepared
// statements, the same value conversions). postgres.js and its dialect are not dependencies of
// Vellum: install them with `npm install --no-save postgres kysely-postgres-js@3` to run this.
// Reports queries/s and CPU per query of this process and of the PostgreSQL backends.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { parseBytea, parseTimestamptz } from '../src/db/postgres.js';
import type { Tables } from '../src/db/schema.js';
import { encodeText } from '../src/db/values.js';
import * as notes from '../src/notes/notes.repository.js';
import { newId } from '../src/shared/ids.js';
import { prose } from './lib/seed.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
  },
});
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const ROUNDS = Number(args.rounds);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TICKS = 100;

/** CPU seconds of every PostgreSQL process on this machine (the backends serving us). */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / TICKS;
}

function machineBusySeconds(): number {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) / TICKS;
}

interface Figures {
  qps: number;
  nodeUsPerQuery: number;
  pgUsPerQuery: number;
  otherCores: number;
}

async function measure(read: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < 2000; i++) await read(); // warm-up: JIT, connections, prepared statements
  let count = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const cpu0 = process.cpuUsage();
  const pg0 = postgresCpuSeconds();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await read();
        count += 1;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const nodeSeconds = (cpu.user + cpu.system) / 1e6;
  const pgSeconds = postgresCpuSeconds() - pg0;
  const busy = machineBusySeconds() - busy0;
  return {
    qps: Math.round(count / wall),
    nodeUsPerQuery: Math.round((nodeSeconds / count) * 1e7) / 10,
    pgUsPerQuery: Math.round((pgSeconds / count) * 1e7) / 10,
    otherCores: Math.round(((busy - nodeSeconds - pgSeconds) / wall) * 100) / 100,
  };
}

const name = `vellum_drivers_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;

const current = openDatabase({ kind: 'postgres', url: url.toString(), poolMax: 10 });
try {
  await migrateToLatest(current.db);
  const owner = newId();
  const noteId = newId();
  const versionId = newId();
  const now = new Date().toISOString();
  await current.db
    .insertInto('users')
    .values({ id: owner, username: 'reader', password_hash: 'x', is_admin: false, created_at: now, updated_at: now })
    .execute();
  await notes.insertNote(current.db, {
    id: noteId,
    owner_id: owner,
    title: 'Benchmark note',
    version_id: versionId,
    now,
  });
  await notes.insertVersion(current.db, {
    id: versionId,
    note_id: noteId,
    version: 1,
    title: 'Benchmark note',
    content: prose(1024),
    created_at: now,
    author_id: owner,
  });

  // Before #10: the builder on every call, node-postgres defaults (Date and Buffer values).
  const before = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 10 }) }),
  });
  const buildEachTime = () =>
    before
      .selectFrom('notes as n')
      .innerJoin('note_versions as v', 'v.id', 'n.version_id')
      .select([
        'n.id',
        'n.owner_id',
        'n.title',
        'v.content',
        'n.version',
        'n.version_id',
        'n.created_at',
        'n.updated_at',
      ])
      .where('n.id', '=', noteId)
      .where('n.owner_id', '=', owner)
      .executeTakeFirst();

  const { default: postgres } = (await import('postgres' as string)) as {
    default: (url: string, options: object) => unknown;
  };
  const { PostgresJSDialect } = (await import('kysely-postgres-js' as string)) as {
    PostgresJSDialect: new (config: object) => PostgresDialect;
  };
  const sqlClient = postgres(url.toString(), {
    max: 10,
    prepare: true,
    connection: { TimeZone: 'UTC' },
    types: {
      isoTimestamp: { to: 1184, from: [1184], serialize: (v: string) => v, parse: parseTimestamptz },
      utf8: { to: 17, from: [17], serialize: (v: Buffer) => '\\x' + v.toString('hex'), parse: parseBytea },
    },
  });
  const postgresJs = new Kysely<Tables>({ dialect: new PostgresJSDialect({ postgres: sqlClient }) });

  const check = async (db: Kysely<Tables>) => {
    const note = await notes.findNote(db, owner, noteId);
    if (note?.created_at !== now || typeof note.content !== 'string' || note.content.length !== 1024)
      throw new Error(`unexpected row ${JSON.stringify(note)?.slice(0, 200)}`);
  };
  await check(current.db);
  await check(postgresJs);

  const candidates: Array<[string, () => Promise<unknown>]> = [
    ['pg, built each call (before)', buildEachTime],
    ['pg, compiled + named statement', () => notes.findNote(current.db, owner, noteId)],
    ['postgres.js, compiled + prepared', () => notes.findNote(postgresJs, owner, noteId)],
  ];
  const results: Record<string, Figures[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, read] of candidates) (results[label] ??= []).push(await measure(read));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `note read, ${CONCURRENCY} concurrent, ${ROUNDS} rounds of ${SECONDS} s; ${os.cpus().length} cores; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('| driver | queries/s (median) | Node µs/query | PostgreSQL µs/query | other load, cores |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [label, figures] of Object.entries(results)) {
    console.log(
      `| ${label} | ${median(figures.map((f) => f.qps))} | ${median(figures.map((f) => f.nodeUsPerQuery))} | ${median(figures.map((f) => f.pgUsPerQuery))} | ${median(figures.map((f) => f.otherCores))} |`,
    );
  }
  console.log(JSON.stringify(results));
  await before.destroy();
  await postgresJs.destroy();
} finally {
  await current.close();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
