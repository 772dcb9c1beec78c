// The web client on a slow network (`npm run bench:web-network`): the built service with a fresh
// SQLite file, Debian's Chromium throttled through the DevTools protocol (400 ms round trip,
// 400 kbit/s each way, no cache), and what a person waits for: the first screen, the notes list
// after logging in, the editor after New note, a note opened cold by its link; bytes on the wire
// (encoded, as the network carried them) for the first screen and the cold note. Also `npm start`
// to its ready line on a built tree. The editor is timed twice: New note pressed the moment the
// list shows, and again after READING_MS with the list (the editor's code is fetched meanwhile). Each figure is the median of RUNS runs; the machine's other
// load slows the browser too, so compare figures from one run of this script.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type CDPSession, chromium, type Page } from '@playwright/test';
import { freePort } from './lib/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.RUNS ?? 3);
const PASSWORD = 'violet-Harbor-lantern-42-quietly';
const THROTTLE = { offline: false, latency: 400, downloadThroughput: 50_000, uploadThroughput: 50_000 };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function run(command: string, args: string[]): Promise<number> {
  const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

/** Starts `npm start` on a built tree; resolves with the milliseconds to its ready line. */
async function start(env: NodeJS.ProcessEnv): Promise<{ ms: number; stop(): Promise<void> }> {
  const began = performance.now();
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('Vellum is ready')) resolve(performance.now() - began);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited ${code}:\n${stderr}`)));
  });
  return {
    ms,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
  };
}

/** Counts the bytes the network carried for this page from now on. */
async function throttled(page: Page): Promise<{ cdp: CDPSession; bytes: () => number }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', THROTTLE);
  let total = 0;
  cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => {
    total += event.encodedDataLength;
  });
  return { cdp, bytes: () => total };
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const began = performance.now();
  await action();
  return performance.now() - began;
}

interface Sample {
  firstScreenMs: number;
  firstScreenBytes: number;
  listMs: number;
  editorMs: number;
  coldNoteMs: number;
  coldNoteBytes: number;
  editorAfterReadingMs: number;
}

/** How long a person looks at the list before pressing New note, in the second editor figure. */
const READING_MS = 3000;

async function logIn(page: Page, username: string): Promise<number> {
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  return timed(async () => {
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('Note number 1', { exact: true }).first().waitFor();
  });
}

async function once(origin: string, username: string, noteId: string): Promise<Sample> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
  try {
    const context: BrowserContext = await browser.newContext({
      baseURL: origin,
      viewport: { width: 1280, height: 800 },
    });
    const page = await context.newPage();
    const first = await throttled(page);
    const firstScreenMs = await timed(async () => {
      await page.goto('/');
      await page.getByRole('button', { name: 'Log in' }).waitFor();
    });
    const firstScreenBytes = first.bytes();
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const listMs = await timed(async () => {
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Note number 1', { exact: true }).first().waitFor();
    });
    const editorMs = await timed(async () => {
      await page.getByRole('button', { name: 'New note' }).click();
      await page.locator('.cm-content').waitFor();
    });
    const cookies = await context.cookies();
    await context.close();

    const cold = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } });
    await cold.addCookies(cookies);
    const coldPage = await cold.newPage();
    const coldNet = await throttled(coldPage);
    const coldNoteMs = await timed(async () => {
      await coldPage.goto(`/notes/${noteId}`);
      await coldPage.locator('.cm-content', { hasText: 'the text of note 1' }).waitFor();
    });
    const coldNoteBytes = coldNet.bytes();
    await cold.close();

    // New note pressed after a moment with the list, as a person does, rather than at once.
    const reading = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } });
    const readingPage = await reading.newPage();
    await throttled(readingPage);
    await logIn(readingPage, username);
    await readingPage.waitForTimeout(READING_MS);
    const editorAfterReadingMs = await timed(async () => {
      await readingPage.getByRole('button', { name: 'New note' }).click();
      await readingPage.locator('.cm-content').waitFor();
    });
    await reading.close();
    return { firstScreenMs, firstScreenBytes, listMs, editorMs, coldNoteMs, coldNoteBytes, editorAfterReadingMs };
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  if (
    (await run('node', ['scripts/build-stamp.mjs', 'check'])) !== 0 &&
    (await run('npm', ['run', '-s', 'build'])) !== 0
  )
    throw new Error('the build failed');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-web-network-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: `sqlite:${path.join(dir, 'vellum.db')}`,
    PUBLIC_URL: origin,
    PWNED_PASSWORDS_URL: 'off',
    RATE_LIMIT: 'off',
    LOG_LEVEL: 'warn',
  };
  const starts: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const server = await start(env);
    starts.push(server.ms);
    if (i < RUNS - 1) await server.stop();
    else {
      try {
        const api = `${origin}/api`;
        const json = { 'content-type': 'application/json' };
        const username = 'reader';
        await fetch(`${api}/auth/signup`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ username, password: PASSWORD }),
        });
        const login = await fetch(`${api}/auth/login`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ username, password: PASSWORD }),
        });
        const { access_token: token } = (await login.json()) as { access_token: string };
        let noteId = '';
        for (let n = 20; n >= 1; n--) {
          const res = await fetch(`${api}/notes`, {
            method: 'POST',
            headers: { ...json, authorization: `Bearer ${token}` },
            body: JSON.stringify({
              title: `Note number ${n}`,
              content: `# Note ${n}\n\nthe text of note ${n}, #bench`,
            }),
          });
          noteId = ((await res.json()) as { id: string }).id;
        }
        const samples: Sample[] = [];
        for (let r = 0; r < RUNS; r++) samples.push(await once(origin, username, noteId));
        const pick = (key: keyof Sample) => median(samples.map((s) => s[key]));
        const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
        const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
        console.log(
          `throttled: ${THROTTLE.latency} ms round trip, ${(THROTTLE.downloadThroughput * 8) / 1000} kbit/s, no cache; median of ${RUNS}`,
        );
        console.log(
          `first screen (login page) ready   ${s(pick('firstScreenMs'))}   ${kb(pick('firstScreenBytes'))} on the wire`,
        );
        console.log(`notes list usable after Log in    ${s(pick('listMs'))}`);
        console.log(`editor ready after New note       ${s(pick('editorMs'))}`);
        console.log(`  the same, ${READING_MS / 1000} s after the list   ${s(pick('editorAfterReadingMs'))}`);
        console.log(
          `a note opened cold by its link    ${s(pick('coldNoteMs'))}   ${kb(pick('coldNoteBytes'))} on the wire`,
        );
        console.log(`npm start to ready (built tree)   ${s(median(starts))}`);
      } finally {
        await server.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
}

await main();
