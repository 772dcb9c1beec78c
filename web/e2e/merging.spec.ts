import type { Browser, BrowserContext, Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

// Issue 39: saves from the web client always ask the server to merge (?merge=true). Two people,
// two browser contexts, closed after each test.
const contexts: BrowserContext[] = [];
async function person(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}
test.afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

/** alice's note, shared with carol as an editor; both have it open. */
async function shared(browser: Browser, content: string, autosave: boolean, clock: boolean) {
  const alice = await person(browser);
  const carol = await person(browser);
  if (clock) {
    await alice.clock.install();
    await carol.clock.install();
  }
  const carolName = await signUp(carol, undefined, undefined, { autosave });
  const aliceName = await signUp(alice, undefined, undefined, { autosave });
  const id = await createNote(alice, 'Plan', content);
  await alice.getByRole('button', { name: 'Share' }).click();
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel('Username').fill(carolName);
  await people.getByRole('button', { name: 'Add person' }).click();
  await expect(people.getByRole('status')).toHaveText(`Shared with ${carolName}: they can read and edit it.`);
  await alice.getByRole('button', { name: 'Share' }).click();
  await carol.goto(`/notes/${id}`);
  await expectContent(carol, content);
  return { alice, carol, aliceName, carolName, id };
}

const conflictPanel = (page: Page) =>
  page.getByRole('alert').filter({ hasText: 'This note changed since you opened it' });

test('alice and carol add lines at different places within seconds: both lines are kept, nobody is asked', async ({
  browser,
}) => {
  const { alice, carol } = await shared(browser, 'one\ntwo\nthree\n', true, true);
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.type('zero\n');
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type('four');

  // alice's autosave lands first; carol's, a moment later, is merged with it.
  await alice.clock.runFor(2100);
  await expect(alice.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
  await carol.clock.runFor(2100);
  await expect(
    carol
      .getByRole('status')
      .filter({ hasText: 'Saved as version 3, together with changes saved elsewhere meanwhile' }),
  ).toBeVisible();
  await expectContent(carol, 'zero\none\ntwo\nthree\nfour');
  // carol's cursor stayed at the end of her line.
  await carol.keyboard.type('!');
  await expectContent(carol, 'zero\none\ntwo\nthree\nfour!');
  // alice, with nothing unsaved, sees version 3 as it is.
  await expectContent(alice, 'zero\none\ntwo\nthree\nfour');
  await expect(conflictPanel(alice)).toHaveCount(0);
  await expect(conflictPanel(carol)).toHaveCount(0);
});

test('an overlapping edit shows the merged text first, both sides kept by default; saving it keeps both', async ({
  browser,
}) => {
  const { alice, carol } = await shared(browser, 'one\ntwo\nthree\n', false, false);
  await contentBox(alice).fill('one\ntwo, said alice\nthree\n');
  await contentBox(carol).fill('intro\none\ntwo, said carol\nthree\n');
  await alice.keyboard.press('Control+s');
  await expect(alice.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
  await carol.keyboard.press('Control+s');

  const panel = conflictPanel(carol);
  await expect(panel).toContainText('Version 2 was saved elsewhere. Nothing was overwritten.');
  // No "keep mine" that would drop alice's line: the merged text, with both at the overlapping place.
  await expect(panel.getByRole('button', { name: 'Keep mine' })).toHaveCount(0);
  await expect(panel.getByRole('radio', { name: 'Keep both' })).toBeChecked();
  await expect(panel.getByRole('textbox', { name: 'Merged text' })).toHaveValue(
    'intro\none\ntwo, said alice\ntwo, said carol\nthree\n',
  );
  await expectAccessible(carol, 'merge conflict');
  // Choosing one side shows it; back to both, and saved.
  await panel.getByRole('radio', { name: 'Use theirs' }).check();
  await expect(panel.getByRole('textbox', { name: 'Merged text' })).toHaveValue('intro\none\ntwo, said alice\nthree\n');
  await panel.getByRole('radio', { name: 'Keep both' }).check();
  await panel.getByRole('button', { name: 'Save merged text' }).click();
  await expect(carol.getByRole('status').filter({ hasText: 'Saved as version 3' })).toBeVisible();
  await expect(panel).toHaveCount(0);
  await expectContent(carol, 'intro\none\ntwo, said alice\ntwo, said carol\nthree\n');
  await expectContent(alice, 'intro\none\ntwo, said alice\ntwo, said carol\nthree\n');
});

test('at 375 px the conflict panel fits the screen', async ({ browser }) => {
  const { alice, carol } = await shared(browser, 'a\n', false, false);
  await carol.setViewportSize({ width: 375, height: 800 });
  await contentBox(carol).fill('a by carol\n');
  await contentBox(alice).fill('a by alice\n');
  await alice.keyboard.press('Control+s');
  await expect(alice.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
  await carol.keyboard.press('Control+s');
  await expect(conflictPanel(carol)).toBeVisible();
  expect(await carol.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await expectAccessible(carol, 'merge conflict at 375 px');
});
