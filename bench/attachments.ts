// Attachments benchmark: `npx tsx bench/attachments.ts [--db sqlite|postgres] [--storage database|s3]`
// (also `npm run bench -- --only attachments`, which runs the database backend). See BENCHMARKS.md, "Attachments".
//
// The service runs as its own process (src/main.ts under tsx), so its CPU and
// resident memory are read from /proc apart from this load generator, which shares the machine's
// cores with it. It measures, for a 10 MiB file: upload and download throughput (MB/s of wall time)
// and the server's CPU per operation; GET /api/notes/{id} latency quiet, then while another client
// uploads 10 MiB files in a loop (the ratio is what uploads cost everyone else); peak RSS over idle.
// With --storage s3 the bytes go to s3rver (npm), a local S3-compatible server in this process.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { percentiles, round, scratchDatabase } from './lib/scratch.js';
import { cpuMs, rssMiB } from './lib/processes.js';
import { startProcess } from '../test/helpers/server-process.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite' },
    storage: { type: 'string', default: 'database' },
    files: { type: 'string', default: '6' },
    'no-write': { type: 'boolean', default: false },
  },
});
const kind = args.db === 'postgres' ? 'postgres' : 'sqlite';
const storage = args.storage === 's3' ? 's3' : 'database';
const FILES = Number(args.files);
const MiB = 1024 * 1024;
const SIZE = 10 * MiB;
const log = (message: string) =>
  process.stdout.write(`[attachments bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** A local S3-compatible server (s3rver, from npm) with the bucket "bench"; posts its port. */
const S3_SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const S3rver = require('s3rver');
const s3 = new S3rver({ directory: workerData.directory, silent: true, configureBuckets: [{ name: 'bench', configs: [] }] });
s3.configureBuckets().then(() => {
  const server = http.createServer(s3.callback());
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
});
`;
/** Uploads random files of `size` bytes until told to stop; says when it starts, and how many it finished. */
const UPLOAD_LOOP = `
const { parentPort, workerData } = require('node:worker_threads');
const { randomBytes } = require('node:crypto');
let stop = false;
parentPort.on('message', () => { stop = true; });
(async () => {
  const bytes = randomBytes(workerData.size);
  let n = 0;
  parentPort.postMessage('started');
  while (!stop) {
    const form = new FormData();
    form.append('file', new Blob([bytes, String(n)]), 'load.bin');
    const res = await fetch(workerData.url, { method: 'POST', headers: workerData.auth, body: form });
    await res.arrayBuffer();
    n++;
  }
  parentPort.postMessage(n);
})();
`;

async function main() {
  const scratch = await scratchDatabase(kind, 'attachments');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-attachments-bench-'));
  let s3Env: Record<string, string> = {};
  let s3Worker: Worker | undefined;
  if (storage === 's3') {
    // s3rver runs on a thread of its own: in this one it would take the event loop that times the GETs.
    s3Worker = new Worker(S3_SERVER, { eval: true, workerData: { directory: path.join(home, 's3') } });
    const port = await new Promise<number>((resolve, reject) =>
      s3Worker!.once('message', resolve).once('error', reject),
    );
    s3Env = {
      ATTACHMENT_STORAGE: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: 'bench',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'on',
    };
  }
  const server = startProcess(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      DATABASE_URL: scratch.url,
      HOME: home,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      CSRF_SECRET: randomBytes(32).toString('hex'),
      PWNED_PASSWORDS_URL: 'off',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_SECONDS: '0',
      MALLOC_MMAP_THRESHOLD_: '1048576',
      ...s3Env,
    },
  });
  try {
    const pid = server.child.pid!;
    const base = `http://127.0.0.1:${await server.port(60_000)}`;
    const json = { 'content-type': 'application/json' };
    const user = { username: `bench${randomBytes(3).toString('hex')}`, password: 'violet-Harbor-lantern-42-quietly' };
    await fetch(`${base}/api/auth/signup`, { method: 'POST', headers: json, body: JSON.stringify(user) });
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify(user) });
    const auth = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
    const note = (await (
      await fetch(`${base}/api/notes`, {
        method: 'POST',
        headers: { ...auth, ...json },
        body: JSON.stringify({ title: 'n', content: 'x'.repeat(1000) }),
      })
    ).json()) as { id: string };

    const upload = async (bytes: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([bytes]), 'bench.bin');
      const res = await fetch(`${base}/api/attachments`, { method: 'POST', headers: auth, body: form });
      if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };
    const download = async (id: string) => {
      const res = await fetch(`${base}/api/attachments/${id}`, { headers: auth });
      let n = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
      if (n !== SIZE) throw new Error(`download: ${n} bytes`);
    };
    const getNote = async () => {
      const t = performance.now();
      const res = await fetch(`${base}/api/notes/${note.id}`, { headers: auth });
      await res.arrayBuffer();
      return performance.now() - t;
    };

    // Warm-up: the modules and the database's first pages.
    await download(await upload(randomBytes(SIZE)));
    const idle = rssMiB(pid);
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 10);

    const files = Array.from({ length: FILES }, () => randomBytes(SIZE));
    const ids: string[] = [];
    let cpu = cpuMs(pid);
    let t = performance.now();
    for (const bytes of files) ids.push(await upload(bytes));
    const uploadMs = performance.now() - t;
    const uploadCpu = cpuMs(pid) - cpu;
    cpu = cpuMs(pid);
    t = performance.now();
    for (const id of ids) await download(id);
    const downloadMs = performance.now() - t;
    const downloadCpu = cpuMs(pid) - cpu;

    const quiet: number[] = [];
    for (let i = 0; i < 300; i++) quiet.push(await getNote());
    // The other client uploads from its own thread: in this one, building and sending 10 MiB bodies
    // would delay the GET timings here, and the figure would be the load generator's, not the server's.
    const loader = new Worker(UPLOAD_LOOP, {
      eval: true,
      workerData: { url: `${base}/api/attachments`, auth, size: SIZE },
    });
    await new Promise((resolve) => loader.once('message', resolve)); // its first upload is under way
    const loaded: number[] = [];
    for (let i = 0; i < 300; i++) loaded.push(await getNote());
    loader.postMessage('stop');
    const uploadsDuring = await new Promise<number>((resolve) => loader.once('message', resolve));
    await loader.terminate();
    clearInterval(sampler);

    const results = {
      date: new Date().toISOString(),
      db: kind,
      storage,
      file_mib: SIZE / MiB,
      files: FILES,
      cpus: os.cpus().length,
      upload_mb_per_s: round((FILES * SIZE) / 1e6 / (uploadMs / 1000)),
      download_mb_per_s: round((FILES * SIZE) / 1e6 / (downloadMs / 1000)),
      server_cpu_ms_per_upload: round(uploadCpu / FILES),
      server_cpu_ms_per_download: round(downloadCpu / FILES),
      get_note_quiet_ms: percentiles(quiet),
      get_note_during_uploads_ms: percentiles(loaded),
      get_note_p99_ratio: round(percentiles(loaded).p99 / percentiles(quiet).p99),
      uploads_during_measure: uploadsDuring,
      rss_idle_mib: round(idle),
      rss_peak_over_idle_mib: round(peak - idle),
    };
    log(JSON.stringify(results));
    if (!args['no-write']) {
      const out = path.join(
        import.meta.dirname,
        'results',
        `attachments-${kind}-${storage}-${results.date.slice(0, 10)}.json`,
      );
      fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
      log(`written to ${path.relative(process.cwd(), out)}`);
    }
  } finally {
    await server.kill();
    await s3Worker?.terminate();
    await scratch.drop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
