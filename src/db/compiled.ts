import type { Compilable, CompiledQuery, DialectAdapter, Kysely, QueryResult } from 'kysely';
import type { Tables } from './schema.js';
import { registerStatement } from './statements.js';

/**
 * Queries built once. Kysely builds, validates and compiles a query tree on every call, which cost
 * more than running the statement (see BENCHMARKS.md). A compiled query is written with Kysely as
 * usual, but against placeholders: it is compiled once per dialect, and each call only fills the
 * parameter array and runs the SQL text, which the drivers keep prepared (sqlite.ts, postgres.ts).
 *
 *   const byId = compiled((db, p: { id: string }) => db.selectFrom('users').select(['id', 'username']).where('id', '=', p.id));
 *   const user = await byId.takeFirst(db, { id });
 *
 * Name the columns rather than `selectAll()`: on PostgreSQL a prepared statement whose result
 * columns change (a migration adding a column, applied by a newer instance during a rolling
 * deploy) fails with "cached plan must not change result type" on every connection that had it.
 *
 * A placeholder must stand where Kysely binds a value (not in an IN-list, whose length is part of
 * the SQL, nor as an identifier). A database with plugins installed (the tests' failure injection)
 * builds the query afresh each time, so plugins still see every query.
 */
export interface CompiledQueryDef<P, R> {
  execute(db: Kysely<Tables>, params: P): Promise<R[]>;
  takeFirst(db: Kysely<Tables>, params: P): Promise<R | undefined>;
  /** The driver's whole result, for affected-row counts. */
  run(db: Kysely<Tables>, params: P): Promise<QueryResult<R>>;
}

class Placeholder {
  constructor(readonly key: string) {}
}

const placeholders: object = new Proxy({}, { get: (_target, key) => new Placeholder(String(key)) });

interface Template {
  readonly compiled: CompiledQuery;
  /** Per parameter: the name of the argument it takes, or undefined for a constant of the query. */
  readonly keys: ReadonlyArray<string | undefined>;
}

export function compiled<P extends object, R>(
  build: (db: Kysely<Tables>, params: P) => Compilable<R>,
): CompiledQueryDef<P, R> {
  // Keyed by the dialect's adapter: one template per dialect instance, shared by its transactions.
  const templates = new WeakMap<DialectAdapter, Template>();

  function template(db: Kysely<Tables>, adapter: DialectAdapter): Template {
    let found = templates.get(adapter);
    if (found === undefined) {
      const query = build(db, placeholders as P).compile();
      const keys = query.parameters.map((value) => (value instanceof Placeholder ? value.key : undefined));
      registerStatement(query.sql);
      found = { compiled: query, keys };
      templates.set(adapter, found);
    }
    return found;
  }

  function run(db: Kysely<Tables>, params: P): Promise<QueryResult<R>> {
    const executor = db.getExecutor();
    if (executor.plugins.length > 0) return db.executeQuery(build(db, params));
    const { compiled: query, keys } = template(db, executor.adapter);
    const parameters = new Array<unknown>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      parameters[i] = key === undefined ? query.parameters[i] : (params as Record<string, unknown>)[key];
    }
    return executor.executeQuery<R>({ query: query.query, queryId: query.queryId, sql: query.sql, parameters });
  }

  return {
    run,
    execute: async (db, params) => (await run(db, params)).rows,
    takeFirst: async (db, params) => (await run(db, params)).rows[0],
  };
}
