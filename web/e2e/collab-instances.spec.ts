import type { ChildProcess } from 'node:child_process';
import { createScratchDatabase, type ScratchDatabase, TEST_DATABASE_URL } from '../../test/helpers/databases';
import { editTogether, expectText, liveState, typeOnTwoLines } from './collab-helpers';
import { expect, startService, test } from './fixtures';

// Issue 39: two replicas behind a balancer edit one note. alice's browser talks to one instance,
// carol's to another; the two share one PostgreSQL database and one Redis (REDIS_URL, through
// which the instances' live documents meet). PostgreSQL and Redis are what the test is about, so
// it runs only with TEST_DATABASE_URL and TEST_REDIS_URL — without them it is skipped, and
// scripts/test.mjs says so loudly, as for every PostgreSQL or Redis test (docs/testing.md).
const TEST_REDIS_URL = process.env.TEST_REDIS_URL?.trim() || undefined;

test.skip(
  TEST_DATABASE_URL === undefined || TEST_REDIS_URL === undefined,
  'needs PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL)',
);

let database: ScratchDatabase | undefined;
const instances: ChildProcess[] = [];
test.afterAll(async () => {
  for (const child of instances.splice(0)) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await database?.drop();
});

test('alice and carol on two instances sharing PostgreSQL and Redis type on different lines: both lines survive', async ({
  browser,
}) => {
  database = await createScratchDatabase('postgres');
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL!, COLLAB_IDLE_SECONDS: '1' };
  // One after the other: the first migrates the new database.
  const origins: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const { service, child } = await startService('', { env });
    instances.push(child);
    origins.push(service.origin);
  }
  const aliceContext = await browser.newContext({ baseURL: origins[0] });
  const carolContext = await browser.newContext({ baseURL: origins[1] });
  try {
    const alice = await aliceContext.newPage();
    const carol = await carolContext.newPage();
    const { id, aliceName, carolName } = await editTogether(alice, carol, 'Two replicas');
    await typeOnTwoLines(alice, carol);
    // Each sees the other's cursor with the name, across the instances.
    await expect(alice.locator('.cm-ySelectionInfo', { hasText: carolName })).toBeVisible();
    await expect(carol.locator('.cm-ySelectionInfo', { hasText: aliceName })).toBeVisible();
    await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);
    await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);

    // Both leave; what the database keeps (a version) has both lines, read through either instance.
    await alice.close();
    await carol.close();
    const again = await carolContext.newPage();
    await again.goto(`/notes/${id}`);
    await expectText(again, 'one and alice\ntwo\nthree and carol');
  } finally {
    await aliceContext.close();
    await carolContext.close();
  }
});
