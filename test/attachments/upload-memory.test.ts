import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MiB = 1024 * 1024;
/** The bound: a 25 MiB upload moves the service's resident memory by less than this. */
const UPLOAD_BUDGET = 60 * MiB;
/**
 * Ours for the download, looser: each chunk read is garbage at once, but V8 and malloc give it back
 * only at their next collection, so the peak is the collector's lag more than what is held (a 25 MiB
 * file whole would still show). BENCHMARKS.md ("Attachments") has the figures.
 */
const DOWNLOAD_BUDGET = 100 * MiB;

function rss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** The highest RSS seen while `work` runs, sampled every 10 ms. */
async function peakDuring(pid: number, work: () => Promise<void>): Promise<number> {
  let peak = rss(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rss(pid));
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rss(pid));
}

for (const kind of databaseKinds) {
  describe(`a 25 MiB file never sits whole in the server's memory [${kind}]`, {
    skip: process.platform !== 'linux' ? 'reads /proc' : false,
  }, () => {
    let server: ServerProcess | undefined;
    let scratch: ScratchDatabase | undefined;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-rss-'));
    after(async () => {
      await server?.kill();
      await scratch?.drop();
      fs.rmSync(home, { recursive: true, force: true });
    });

    test('upload and download of 25 MiB: byte-exact; RSS within 60 MB of idle while uploading (100 MB downloading)', {
      timeout: 120_000,
    }, async () => {
      scratch = await createScratchDatabase(kind);
      server = startProcess(process.execPath, entryArgs('main'), {
        cwd: ROOT,
        env: {
          ...TEST_ENV,
          DATABASE_URL: scratch.url,
          HOME: home,
          PORT: '0',
          HOST: '127.0.0.1',
          JWT_SECRET,
          CSRF_SECRET,
          PWNED_PASSWORDS_URL: 'off',
          RATE_LIMIT: 'off',
          LOG_LEVEL: 'info',
          SHUTDOWN_DRAIN_SECONDS: '0',
          MALLOC_MMAP_THRESHOLD_: '1048576',
        },
      });
      const pid = server.child.pid!;
      const base = `http://127.0.0.1:${await server.port()}`;
      const json = { 'content-type': 'application/json' };
      const username = uniqueName('rss');
      assert.equal(
        (
          await fetch(`${base}/api/auth/signup`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ username, password: GOOD_PASSWORD }),
          })
        ).status,
        201,
      );
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ username, password: GOOD_PASSWORD }),
      });
      const auth = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
      const send = async (bytes: Buffer) => {
        const form = new FormData();
        form.append('file', new Blob([bytes]), 'big.bin');
        const res = await fetch(`${base}/api/attachments`, { method: 'POST', headers: auth, body: form });
        assert.equal(res.status, 201, await res.clone().text());
        return (await res.json()) as { id: string; sha256: string };
      };
      const fetchBack = async (id: string) => {
        const res = await fetch(`${base}/api/attachments/${id}`, { headers: auth });
        const hash = createHash('sha256');
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
        return hash.digest('hex');
      };
      // Warm: every module an upload and a download load, and the database's first pages.
      const warm = await send(randomBytes(2 * MiB));
      assert.equal(await fetchBack(warm.id), warm.sha256);
      const idle = rss(pid);

      const big = randomBytes(25 * MiB);
      let stored!: { id: string; sha256: string };
      const uploadPeak = await peakDuring(pid, async () => {
        stored = await send(big);
      });
      assert.equal(stored.sha256, createHash('sha256').update(big).digest('hex'));
      let downloaded = '';
      const downloadPeak = await peakDuring(pid, async () => {
        downloaded = await fetchBack(stored.id);
      });
      assert.equal(downloaded, stored.sha256, 'the same bytes back');
      const figures = `idle ${(idle / MiB).toFixed(1)} MiB, upload peak ${(uploadPeak / MiB).toFixed(1)}, download peak ${(downloadPeak / MiB).toFixed(1)}`;
      assert.ok(
        uploadPeak - idle < UPLOAD_BUDGET,
        `the upload grew RSS ${((uploadPeak - idle) / MiB).toFixed(1)} MiB (${figures})`,
      );
      assert.ok(
        downloadPeak - idle < DOWNLOAD_BUDGET,
        `the download grew RSS ${((downloadPeak - idle) / MiB).toFixed(1)} MiB (${figures})`,
      );
      console.log(
        `# ${kind}: idle ${(idle / MiB).toFixed(1)} MiB, upload peak +${((uploadPeak - idle) / MiB).toFixed(1)} MiB, download peak +${((downloadPeak - idle) / MiB).toFixed(1)} MiB`,
      );
    });
  });
}
