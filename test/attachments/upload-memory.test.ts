import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createScratchDatabase, databaseKinds, type ScratchDatabase } from '../helpers/databases.js';
import { CSRF_SECRET, GOOD_PASSWORD, JWT_SECRET, TEST_ENV, uniqueName } from '../helpers/harness.js';
import { startProcess, type ServerProcess } from '../helpers/server-process.js';
import { entryArgs } from '../helpers/entry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MiB = 1024 * 1024;
const FILE_BYTES = 25 * MiB;

/**
 * The bytes a process has read and written through system calls so far (/proc/<pid>/io: sockets,
 * files, the database's pages): what the server has taken from the upload's socket and put into the
 * database, counted by the kernel whatever the machine's load.
 */
function io(pid: number): { read: number; written: number } {
  const text = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  return { read: Number(/rchar: (\d+)/.exec(text)![1]), written: Number(/wchar: (\d+)/.exec(text)![1]) };
}

function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

/** Polls `condition` until it holds (true) or `capMs` passes (false): a cap, not a delay. */
async function eventually(condition: () => boolean, capMs: number): Promise<boolean> {
  const deadline = Date.now() + capMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

/**
 * The peak RSS growth while `work` runs, for bench/stall.ts (VELLUM_STALL_FIGURES): a figure the
 * benchmark reports against its budget, not a test's bound (RSS depends on the collector's lag).
 */
async function recordRss(label: string, pid: number, work: () => Promise<void>): Promise<void> {
  const file = process.env.VELLUM_STALL_FIGURES;
  if (!file) return work();
  const idle = rss(pid);
  let peak = idle;
  const timer = setInterval(() => {
    peak = Math.max(peak, rss(pid));
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, rss(pid));
  fs.appendFileSync(file, `${JSON.stringify({ kind: 'rss', label, grownMiB: (peak - idle) / MiB })}\n`);
}

/** A multipart upload of `bytes` whose last `heldBack` bytes wait until `release` is called. */
function heldUpload(base: string, auth: Record<string, string>, bytes: Buffer, heldBack: number) {
  const boundary = `----vellum${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let sent = 0;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(
      `${base}/api/attachments`,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...auth,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + bytes.length + tail.length,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      },
    );
    request.on('error', reject);
    void (async () => {
      const write = (chunk: Buffer) =>
        new Promise<void>((done) => (request.write(chunk) ? done() : request.once('drain', done)));
      await write(head);
      const until = bytes.length - heldBack;
      for (let at = 0; at < until; at += 256 * 1024) {
        const piece = bytes.subarray(at, Math.min(until, at + 256 * 1024));
        await write(piece);
        sent += piece.length;
      }
      await released;
      request.end(Buffer.concat([bytes.subarray(until), tail]));
    })().catch(reject);
  });
  return { answer, release, sent: () => sent };
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

    test('upload and download of 25 MiB: byte-exact; stored while the body still arrives, first byte out before the file is read whole', {
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
        const upload = heldUpload(base, auth, bytes, 0);
        upload.release();
        const res = await upload.answer;
        assert.equal(res.status, 201, res.body);
        return JSON.parse(res.body) as { id: string; sha256: string };
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

      // The upload: all but the last 5 MiB sent, then held. Streamed, the server stores what it has
      // read while the rest is still to come; buffered whole (request.file().toBuffer(), a body
      // parser), it writes nothing to the database before the body has ended, which it cannot here.
      const big = randomBytes(FILE_BYTES);
      let stored!: { id: string; sha256: string };
      await recordRss(`[${kind}] upload of 25 MiB`, pid, async () => {
        const before = io(pid);
        const upload = heldUpload(base, auth, big, 5 * MiB);
        const written = () => io(pid).written - before.written;
        const storedWhileHeld = await eventually(() => written() >= 10 * MiB, 60_000);
        const figures = `server read ${((io(pid).read - before.read) / MiB).toFixed(1)} MiB, wrote ${(written() / MiB).toFixed(1)} MiB; client sent ${(upload.sent() / MiB).toFixed(1)} MiB`;
        assert.ok(storedWhileHeld, `nothing stored while the body's end was held back: ${figures}`);
        upload.release();
        const res = await upload.answer;
        assert.equal(res.status, 201, res.body);
        stored = JSON.parse(res.body) as { id: string; sha256: string };
      });
      assert.equal(stored.sha256, createHash('sha256').update(big).digest('hex'));

      // The download: when the first chunk reaches the client, a streaming server has read ahead only
      // as far as the sockets' buffers let it (a few MiB); one that gathers the file whole has read all
      // 25 MiB before the first byte goes out.
      await recordRss(`[${kind}] download of 25 MiB`, pid, async () => {
        const before = io(pid);
        const hash = createHash('sha256');
        const { readAhead, status } = await new Promise<{ readAhead: number; status: number }>((resolve, reject) => {
          http
            .get(`${base}/api/attachments/${stored.id}`, { headers: auth, agent: false }, (response) => {
              response.once('data', (chunk: Buffer) => {
                hash.update(chunk);
                const readAhead = io(pid).read - before.read;
                response.on('data', (more: Buffer) => hash.update(more));
                response.on('end', () => resolve({ readAhead, status: response.statusCode! }));
                response.on('error', reject);
              });
            })
            .on('error', reject);
        });
        assert.equal(status, 200);
        assert.ok(
          readAhead < FILE_BYTES - 4 * MiB,
          `the server had read ${(readAhead / MiB).toFixed(1)} MiB when the first byte arrived`,
        );
        assert.equal(hash.digest('hex'), stored.sha256, 'the same bytes back');
      });
    });
  });
}
