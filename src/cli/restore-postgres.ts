import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { knownMigrations } from '../db/migrate.js';
import type { RestoreSummary } from './backup.js';
import { CommandError } from './commands.js';

/**
 * `vellum restore FILE` on PostgreSQL (issue #43, finding 8): a restore that cannot make things
 * worse. The dump goes into a NEW database; only when pg_restore (or psql, for a plain SQL dump)
 * finished without an error and the result is a Vellum database of this version or an older one are
 * the databases renamed: the live one to NAME_before_restore_TIME (kept), the new one to NAME. A
 * refused file leaves the live database as it was and the new one dropped. Renaming a database
 * needs every other connection to it gone, so a running service makes restore refuse (checked
 * before the long work and again by the rename itself).
 */

/** A connection URL for another database on the same server, and the one a URL names. */
function onDatabase(url: string, name: string): string {
  const other = new URL(url);
  other.pathname = `/${encodeURIComponent(name)}`;
  return other.toString();
}
function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || new URL(url).username || 'postgres';
}
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A server maintenance connection (the `postgres` database), for creating, dropping and renaming. */
async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: onDatabase(url, 'postgres'), connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new CommandError(`cannot connect to PostgreSQL: ${(error as Error).message}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a PostgreSQL client program; its password goes in the environment, never in the arguments. */
function run(program: string, args: string[], url: string): Promise<Run> {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return new Promise((resolve, reject) => {
    const child = spawn(
      program,
      args.map((a) => (a === '{url}' ? parsed.toString() : a)),
      {
        env: { ...process.env, ...(password === '' ? {} : { PGPASSWORD: password }) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new CommandError(`${program} was not found: install the PostgreSQL client programs (postgresql-client)`)
          : error,
      ),
    );
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last line a client program wrote about its failure, for a one-line message. */
function lastError(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(pg_restore|psql): (warning|detail|hint):/i.test(l));
  const error = lines.filter((l) => /error|fatal/i.test(l)).at(-1) ?? lines.at(-1) ?? 'no message';
  return error.replace(/^(pg_restore|psql): (error: )?/i, '');
}

type DumpKind = 'archive' | 'plain';

/** What kind of dump the file is, and whether it holds Vellum's migration table, before anything is created. */
async function inspect(file: string, url: string): Promise<DumpKind> {
  const head = Buffer.alloc(5);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 5, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head.toString('latin1') === 'PGDMP') {
    const list = await run('pg_restore', ['--list', file], url);
    if (list.code !== 0) throw new CommandError(`the dump cannot be read: ${lastError(list.stderr)}`);
    if (!/ TABLE \S+ kysely_migration /.test(list.stdout))
      throw new CommandError('the dump is not a Vellum database (no kysely_migration table)');
    return 'archive';
  }
  const text = fs.readFileSync(file, 'utf8');
  if (!text.startsWith('--\n-- PostgreSQL database dump')) {
    throw new CommandError(
      'the file is not a PostgreSQL dump (neither pg_dump -Fc nor plain SQL from pg_dump); for SQLite, set DATABASE_URL to the sqlite: file',
    );
  }
  // pg_dump ends a plain dump with this line: without it the file was cut short.
  if (!/\n-- PostgreSQL database dump complete\n/.test(text))
    throw new CommandError('the dump is incomplete (truncated: it lacks the end pg_dump writes)');
  if (!/\nCREATE TABLE \S*kysely_migration /.test(text))
    throw new CommandError('the dump is not a Vellum database (no kysely_migration table)');
  return 'plain';
}

/** Whether any other session is connected to the database (a running Vellum). */
async function connections(client: pg.Client, name: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    'select count(*) as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [name],
  );
  return Number(rows[0]?.n ?? 0);
}

function inUse(name: string): CommandError {
  return new CommandError(
    `database ${name} is in use: stop every Vellum process that uses it (and other sessions on it), then run restore again`,
  );
}

/** The restored database, checked as Vellum's own migrations table says. */
async function check(url: string): Promise<{ notes: number; versions: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = await client.query("select to_regclass('kysely_migration') as t");
    if (table.rows[0]?.t === null)
      throw new CommandError('the dump is not a Vellum database (no kysely_migration table)');
    const applied = (await client.query<{ name: string }>('select name from kysely_migration')).rows.map((r) => r.name);
    if (applied.length === 0) throw new CommandError('the dump is not a Vellum database (no migrations recorded)');
    const unknown = applied.filter((name) => !knownMigrations.includes(name));
    if (unknown.length > 0) {
      throw new CommandError(
        `the dump was written by a newer Vellum (migrations ${unknown.join(', ')}); restore it with that version, or an older dump with this one`,
      );
    }
    const count = async (t: string) => {
      if ((await client.query('select to_regclass($1) as t', [t])).rows[0]?.t === null)
        throw new CommandError(`the dump is incomplete: table ${t} is missing`);
      return Number((await client.query<{ n: string }>(`select count(*) as n from ${t}`)).rows[0]?.n ?? 0);
    };
    return { notes: await count('notes'), versions: await count('note_versions') };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function restorePostgres(url: string, dump: string, now = new Date()): Promise<RestoreSummary> {
  const file = path.resolve(dump);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CommandError(`no dump at ${file}`);
  const target = databaseName(url);
  const stamp = now.toISOString().replace(/\D/g, '').slice(0, 14);
  // PostgreSQL names are at most 63 bytes: the suffix is kept, the name shortened.
  const named = (suffix: string) => `${target.slice(0, 63 - suffix.length)}${suffix}`;
  const fresh = named(`_restore_${stamp}`);
  const previous = named(`_before_restore_${stamp}`);

  const kind = await inspect(file, url);
  const exists = await admin(url, async (client) => {
    const found = (await client.query('select 1 from pg_database where datname = $1', [target])).rowCount === 1;
    if (found && (await connections(client, target)) > 0) throw inUse(target);
    await client.query(`create database ${ident(fresh)}`);
    return found;
  });
  const dropFresh = () => admin(url, (client) => client.query(`drop database if exists ${ident(fresh)}`));
  let summary: { notes: number; versions: number };
  try {
    const into = onDatabase(url, fresh);
    const restored =
      kind === 'archive'
        ? await run(
            'pg_restore',
            ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', '-d', '{url}', file],
            into,
          )
        : await run(
            'psql',
            ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-d', '{url}', '-f', file],
            into,
          );
    if (restored.code !== 0) {
      throw new CommandError(
        `the dump could not be restored completely (truncated or damaged?): ${lastError(restored.stderr)}`,
      );
    }
    summary = await check(into);
  } catch (error) {
    await dropFresh().catch(() => undefined);
    if (error instanceof CommandError) throw error;
    throw new CommandError(`restore failed: ${(error as Error).message}`);
  }
  // The swap: two renames, undone if the second fails. A rename fails while anyone is connected.
  await admin(url, async (client) => {
    if (exists) {
      try {
        await client.query(`alter database ${ident(target)} rename to ${ident(previous)}`);
      } catch (error) {
        await client.query(`drop database if exists ${ident(fresh)}`).catch(() => undefined);
        if ((error as { code?: string }).code === '55006') throw inUse(target);
        throw new CommandError(`cannot rename database ${target}: ${(error as Error).message}`);
      }
    }
    try {
      await client.query(`alter database ${ident(fresh)} rename to ${ident(target)}`);
    } catch (error) {
      if (exists) await client.query(`alter database ${ident(previous)} rename to ${ident(target)}`);
      throw new CommandError(
        `cannot rename database ${fresh} to ${target}: ${(error as Error).message}; the restored copy is kept as ${fresh}`,
      );
    }
  });
  return { file, database: target, previous: exists ? previous : undefined, ...summary };
}
