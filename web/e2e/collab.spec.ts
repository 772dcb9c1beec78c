import type { Browser, BrowserContext, Page } from '@playwright/test';
import { colourFor } from '../src/notes/people-colours';
import { expectText, liveState, rgb, share } from './collab-helpers';
import { contentBox, createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

// Issue 39: live co-editing over /api/collab. Each person in a browser context of their own, closed
// after each test, with live editing on (the other specs turn it off).
const contexts: BrowserContext[] = [];
async function person(browser: Browser, viewport?: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext(viewport === undefined ? {} : { viewport });
  contexts.push(context);
  return context.newPage();
}
test.afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

test('alice and carol type on different lines at the same time: both lines are there for both, with the other’s cursor and name', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser, { width: 375, height: 800 });
  const carolName = await signUp(carol, undefined, undefined, { live: true });
  const aliceName = await signUp(alice, undefined, undefined, { live: true });
  const id = await createNote(alice, 'Together', 'one\ntwo\nthree');
  await share(alice, carolName, 'editor');
  await carol.goto(`/notes/${id}`);
  await expectContent(carol, 'one\ntwo\nthree');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);

  // Both type at once, alice at the end of line 1, carol at the end of line 3.
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.press('End');
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await Promise.all([
    alice.keyboard.type(' and alice', { delay: 20 }),
    carol.keyboard.type(' and carol', { delay: 20 }),
  ]);
  await expectText(alice, 'one and alice\ntwo\nthree and carol');
  await expectText(carol, 'one and alice\ntwo\nthree and carol');
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);

  // The other's cursor, with the name beside it, on that person's colour, inside the editor (alice's
  // on the first line is not cut off by its top edge), and still so once the page is photographed:
  // the library's style attributes are refused by the page's CSP and Chromium empties them then.
  // (Shown at all times, not only on hover: opacity 1.)
  for (const [page, name] of [
    [alice, carolName],
    [carol, aliceName],
  ] as const) {
    const label = page.locator('.cm-ySelectionInfo', { hasText: name });
    await expect(label).toBeVisible();
    await page.screenshot();
    await expect(label).toHaveCSS('opacity', '1');
    await expect(label).toHaveCSS('background-color', rgb(colourFor(name)));
    await expect(label).toHaveCSS('color', 'rgb(255, 255, 255)');
    const inside = await label.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const editor = element.closest('.cm-scroller')!.getBoundingClientRect();
      return box.top >= editor.top && box.bottom <= editor.bottom && box.left >= editor.left;
    });
    expect(inside, `${name}'s label inside the editor`).toBe(true);
  }
  await expectAccessible(alice, 'live editing');
  await expectAccessible(carol, 'live editing at 375 px');
  expect(await carol.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

  // The title is shared too.
  await alice.getByLabel('Title').fill('Together, live');
  await expect(carol.getByLabel('Title')).toHaveValue('Together, live');

  // No Save needed: a reload (from the server's live document) has both lines.
  await carol.reload();
  await expectText(carol, 'one and alice\ntwo\nthree and carol');
});

test('a viewer watches and cannot type; a member removed while editing is closed out with a message', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  const dave = await person(browser);
  const carolName = await signUp(carol, undefined, undefined, { live: true });
  const daveName = await signUp(dave, undefined, undefined, { live: true });
  await signUp(alice, undefined, undefined, { live: true });
  const id = await createNote(alice, 'Menu', 'Soup');
  await share(alice, carolName, 'editor');
  await share(alice, daveName, 'viewer');

  await dave.goto(`/notes/${id}`);
  await expect(dave.getByText('Shared with you: you can read this note.')).toBeVisible();
  await expect(contentBox(dave)).toHaveCount(0);
  await expect(dave.getByRole('button', { name: 'Save' })).toHaveCount(0);

  await carol.goto(`/notes/${id}`);
  await expect(liveState(carol)).toHaveText(/^Live with .* · Saved$/);
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' and bread');
  await expectText(alice, 'Soup and bread');

  // alice removes carol: carol's session ends, her editor takes no more typing.
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByRole('button', { name: `Remove ${carolName}` }).click();
  await expect(people.getByRole('status')).toHaveText(`${carolName} no longer has this note.`);
  await expect(carol.getByRole('alert')).toHaveText(
    'Your access to this note ended: live editing is closed. The text stays here to read and copy.',
  );
  await expect(contentBox(carol)).toHaveAttribute('contenteditable', 'false');
  await expect(carol.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await contentBox(carol).click();
  await carol.keyboard.type('!!');
  await expectText(carol, 'Soup and bread');
  await expectText(alice, 'Soup and bread');
  await expectAccessible(carol, 'live editing ended');
});

test('without the live socket the editor saves by itself as before, merging', async ({ browser }) => {
  const page = await person(browser);
  // The socket refused at once, as by a proxy that does not pass WebSockets.
  await page.routeWebSocket('**/api/collab', (socket) => socket.close());
  await page.clock.install();
  await signUp(page, undefined, undefined, { live: true, autosave: true });
  await createNote(page, 'Alone', 'first');
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' and more');
  const state = page.getByRole('status').filter({ hasText: /Unsaved changes|Saved as version|^Live/ });
  await expect(state).toHaveText('Unsaved changes');
  await page.clock.runFor(2100);
  await expect(state).toHaveText('Saved as version 2');
  await expectContent(page, 'first and more');
});
