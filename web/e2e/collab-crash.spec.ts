import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { editTogether, expectText, liveState } from './collab-helpers';
import { contentBox, expect, freePort, startService, test } from './fixtures';

// Issue 39: a server that stops without storing (kill -9, a crash, the power) loses what it had
// acknowledged since it last stored the live document (about a second's typing normally). The
// people still on the note had it: coming back, their editors put it back. The test widens that
// window to minutes (TEST_COLLAB_STORE_MS) so that the stop always falls inside it.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-e2e-crash-'));
let running: ChildProcess | undefined;
test.afterAll(async () => {
  if (running !== undefined && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running!.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test.setTimeout(120_000);

test('the server stops before storing what it acknowledged: alice, still on the note, puts it back with what she typed meanwhile', async ({
  browser,
}) => {
  const port = await freePort();
  // No version by idleness either: only the stored document could have kept the typing.
  const env = { TEST_COLLAB_STORE_MS: '600000', COLLAB_IDLE_SECONDS: '3600' };
  const start = async () => (running = (await startService(path.join(dir, 'vellum.db'), { port, env })).child);
  await start();
  const aliceContext = await browser.newContext({ baseURL: `http://127.0.0.1:${port}` });
  const carolContext = await browser.newContext({ baseURL: `http://127.0.0.1:${port}` });
  try {
    const alice = await aliceContext.newPage();
    const carol = await carolContext.newPage();
    const { id, aliceName } = await editTogether(alice, carol, 'Crash');
    await contentBox(alice).click();
    await alice.keyboard.press('Control+End');
    await alice.keyboard.type(' and two');
    // carol has it: the server took it in (and acknowledged it to alice as it passed it on).
    await expectText(carol, 'one\ntwo\nthree and two');
    await carol.close();

    const stopped = new Promise((resolve) => running!.once('exit', resolve));
    running!.kill('SIGKILL');
    await stopped;
    await expect(liveState(alice)).toHaveCount(0);
    await contentBox(alice).click();
    await alice.keyboard.press('Control+Home');
    await alice.keyboard.type('So: ');
    await start();

    // alice is live again by herself, with everything; a newcomer reads the same.
    // The editor tries again 2, 4, 8, 16 s apart: a server slow to restart can cost a 30 s wait.
    await expect(liveState(alice)).toHaveText('Live · Saved', { timeout: 60_000 });
    await expectText(alice, 'So: one\ntwo\nthree and two');
    const again = await carolContext.newPage();
    await again.goto(`/notes/${id}`);
    await expectText(again, 'So: one\ntwo\nthree and two');
    await expect(liveState(again)).toHaveText(`Live with ${aliceName} · Saved`);
  } finally {
    await aliceContext.close();
    await carolContext.close();
  }
});
