// The yardstick: a bare Fastify server (default options, no logger, no hooks) that answers JSON
// bodies of a requested size. The runner measures it with the same load generator and settings as
// Vellum, so each Vellum figure can be read as a fraction of "what Fastify alone does here".
//
//   GET  /bytes/:n  -> 200 with a JSON body of exactly n bytes
//   POST /bytes/:n  -> parses the JSON request body, then 200 with n bytes of JSON (204 when n is 0)
//
// Started by bench/run.ts as its own process; it exits when its parent goes away or after
// BASELINE_MAX_SECONDS, so it can never outlive the run.
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 0);
const maxSeconds = Number(process.env.BASELINE_MAX_SECONDS ?? 900);

const bodies = new Map<number, { data: string }>();

/** `{"data":"xxx…"}` is 11 bytes of framing plus the padding. */
function bodyOfSize(n: number): { data: string } {
  let body = bodies.get(n);
  if (body === undefined) {
    body = { data: 'x'.repeat(Math.max(0, n - 11)) };
    bodies.set(n, body);
  }
  return body;
}

const app = Fastify({ bodyLimit: 8 * 1024 * 1024 });
app.get<{ Params: { n: string } }>('/bytes/:n', async (request) => bodyOfSize(Number(request.params.n) || 0));
app.post<{ Params: { n: string } }>('/bytes/:n', async (request, reply) => {
  const n = Number(request.params.n) || 0;
  return n === 0 ? reply.code(204).send() : bodyOfSize(n);
});
app.get('/healthz', async () => ({ status: 'ok' }));

const parent = process.ppid;
const watchdog = setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000);
watchdog.unref();
setTimeout(() => process.exit(0), maxSeconds * 1000).unref();
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
