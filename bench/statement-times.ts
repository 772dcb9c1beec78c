// Where a save's time goes inside the database driver: times every statement SQLite runs during
// N saves through the real app (in-process), by SQL text. PostgreSQL's side is the server's, see
// BENCHMARKS.md "Issue #28".
//   npx tsx bench/statement-times.ts [saves]
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import { withInProcessApp } from './lib/in-process.js';

const saves = Number(process.argv[2] ?? 5000);
const times = new Map<string, { n: number; ms: number }>();
const prepare = BetterSqlite3.prototype.prepare;
BetterSqlite3.prototype.prepare = function (this: BetterSqlite3.Database, source: string) {
  const statement = prepare.call(this, source) as BetterSqlite3.Statement;
  for (const method of ['run', 'all', 'get'] as const) {
    const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
    (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const start = performance.now();
      try {
        return original(...args);
      } finally {
        const entry = times.get(source) ?? { n: 0, ms: 0 };
        entry.n += 1;
        entry.ms += performance.now() - start;
        times.set(source, entry);
      }
    };
  }
  return statement;
} as typeof prepare;

await withInProcessApp('sqlite', 'statement-times', async ({ app, token }) => {
  const auth = { authorization: `Bearer ${token}` };
  const created = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: auth,
    payload: { title: 't', content: 'x' },
  });
  const { id } = created.json() as { id: string };
  const content = 'lorem ipsum dolor sit amet '.repeat(40);
  for (let i = 0; i < 500; i++)
    await app.inject({
      method: 'POST',
      url: `/api/notes/${id}/versions`,
      headers: auth,
      payload: { title: 't', content },
    });
  times.clear();
  const start = performance.now();
  for (let i = 0; i < saves; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, () =>
        app.inject({
          method: 'POST',
          url: `/api/notes/${id}/versions`,
          headers: auth,
          payload: { title: 't', content },
        }),
      ),
    );
  }
  const wall = performance.now() - start;
  let total = 0;
  const rows = [...times].map(([sql, t]) => {
    total += t.ms;
    return { sql: sql.replace(/\s+/g, ' ').slice(0, 110), perSaveUs: Math.round((t.ms / saves) * 1000), calls: t.n };
  });
  rows.sort((a, b) => b.perSaveUs - a.perSaveUs);
  console.table(rows.slice(0, 15));
  console.log(
    `wall ${((wall / saves) * 1000).toFixed(0)} µs per save (in-process, 10 at a time), driver ${((total / saves) * 1000).toFixed(0)} µs`,
  );
});
