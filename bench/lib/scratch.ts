import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** Shared by the in-process benches (search, organise): a throwaway database, percentiles, a seeded generator. */

/** A fresh SQLite file in a temp folder, or a new PostgreSQL database from BENCH_DATABASE_URL; `drop` removes it. */
export async function scratchDatabase(
  kind: 'sqlite' | 'postgres',
  label: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vellum-${label}-bench-`));
    return {
      url: `sqlite:${path.join(dir, 'bench.db')}`,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `vellum_bench_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export const round = (ms: number) => Math.round(ms * 100) / 100;

export function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: round(at(50)), p95: round(at(95)), p99: round(at(99)), max: round(sorted.at(-1)!), n: sorted.length };
}

/** mulberry32: a small seeded generator, so every run sees the same data. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
