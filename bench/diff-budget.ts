// Diff budget benchmark (issue #19 finding 5): `node --import tsx bench/diff-budget.ts` (SQLite, in process).
// Latency of worst-case 1 MiB diffs over HTTP, and GET /healthz p99 while 50 diffs of two ~60 K versions run at once.
const MiB = 1024 * 1024;
function fill(f: (i: number) => string, size = MiB): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < size; i += 1) {
    const s = f(i);
    parts.push(s);
    n += s.length;
  }
  return parts.join('').slice(0, size);
}
// deterministic PRNG
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
function cases(size = MiB): Record<string, [string, string]> {
  const r = rng(1);
  const words = (n: number, g: () => number) =>
    Array.from({ length: n }, () => Math.floor(g() * 50).toString(36)).join(' ');
  const prose = fill((i) => `${words(8, r)} ${i}\n`, size);
  const scattered = prose
    .split('\n')
    .map((l, i) => (i % 7 === 3 ? `${l} edited` : l))
    .join('\n');
  const r2 = rng(2);
  // unrelated texts sharing lots of repeated lines (no unique anchors, Myers does real work)
  const sharedA = fill((i) => `${Math.floor(r2() * 30)}\n`, size);
  const sharedB = fill((i) => `${Math.floor(r2() * 30)}\n`, size);
  return {
    unrelatedOneChar: [fill(() => 'a\n', size), fill(() => 'b\n', size)],
    unrelatedShared: [sharedA, sharedB],
    scatteredEdits: [prose, scattered],
    allIdentical: [fill(() => 'x\n', size), fill(() => 'x\n', size).slice(0, size - 1000) + 'y\n'.repeat(500)],
    longLines: [fill((i) => `${'p'.repeat(100_000)}${i}\n`, size), fill((i) => `${'q'.repeat(100_000)}${i}\n`, size)],
    oneLine: [fill(() => 'a', size), fill(() => 'b', size)],
    alternating: [fill((i) => (i % 2 ? 'a\n' : 'b\n'), size), fill((i) => (i % 3 ? 'a\n' : 'b\n'), size)],
    reversed: [prose, prose.split('\n').reverse().join('\n')],
  };
}
const h = await import('../test/helpers/harness.js');
const st = await import('../test/helpers/stall.js');
const { openDatabase } = await import('../src/db/database.js');
const { migrateToLatest } = await import('../src/db/migrate.js');
const url = `sqlite:${(await import('node:os')).tmpdir()}/vellum-diff-bench-${Date.now()}.db`;
const config = h.testConfig(url);
const database = openDatabase(config.database);
await migrateToLatest(database.db);
const app = await h.buildTestApp(config, database);
const s = await h.newSession(app);
const base = await st.listening(app);
async function note(from: string, to: string) {
  const c = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: s.auth,
    payload: { title: 't', content: from },
  });
  const id = c.json().id;
  const v = await app.inject({
    method: 'POST',
    url: `/api/notes/${id}/versions`,
    headers: s.auth,
    payload: { title: 't', content: to },
  });
  if (v.statusCode !== 204) throw new Error(v.body);
  return id;
}
const get = async (id: string) => {
  const t = performance.now();
  const r = await fetch(`${base}/api/notes/${id}/diff`, { headers: s.auth });
  const b = await r.text();
  return {
    ms: performance.now() - t,
    status: r.status,
    bytes: b.length,
    complete: r.status === 200 ? JSON.parse(b).complete : null,
  };
};
const all = cases(1024 * 1024 - 64);
for (const name of ['unrelatedOneChar', 'unrelatedShared', 'alternating', 'scatteredEdits', 'reversed', 'longLines']) {
  const [a, b] = all[name]!.map((t) => t.slice(0, 1024 * 1024)) as [string, string];
  const id = await note(a, b);
  const runs = [];
  for (let k = 0; k < Number(process.env.RUNS ?? 7); k++) runs.push(await get(id));
  const ms = runs.map((r) => r.ms);
  console.log(
    name.padEnd(17),
    'p50',
    st.percentile(ms, 50).toFixed(0),
    'p99(max)',
    st.percentile(ms, 99).toFixed(0),
    'ms',
    (runs[0]!.bytes / 1e6).toFixed(1),
    'MB complete',
    [...new Set(runs.map((r) => r.complete))].join('/'),
    'status',
    [...new Set(runs.map((r) => r.status))].join('/'),
  );
}
const r = cases(30_000).unrelatedShared!;
const id = await note(r[0], r[1]);
await get(id);
for (let k = 0; k < 2; k++) {
  const { result, p99, samples } = await st.healthDuring(base, () =>
    Promise.all(Array.from({ length: 50 }, () => get(id))),
  );
  const ok = result.filter((x: { status: number }) => x.status === 200);
  console.log(
    `50 concurrent 60K diffs: /healthz p99 ${p99.toFixed(0)} ms max ${Math.max(...samples).toFixed(0)} (${samples.length} probes); 200s ${ok.length} 503s ${50 - ok.length}; diff p50 ${st
      .percentile(
        result.map((x: { ms: number }) => x.ms),
        50,
      )
      .toFixed(0)} p99 ${st
      .percentile(
        result.map((x: { ms: number }) => x.ms),
        99,
      )
      .toFixed(0)} ms`,
  );
}
await app.close();
await database.close();
