import type { Browser, BrowserContext, Page, Route } from '@playwright/test';
import { colourFor } from '../src/notes/people-colours';
import { editTogether, expectText, liveState, rgb, share, typeOnTwoLines } from './collab-helpers';
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
  const { aliceName, carolName } = await editTogether(alice, carol, 'Together');
  await typeOnTwoLines(alice, carol);
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

test('carol, made viewer while typing live, can only read and keeps what the server dropped; made editor again, she types and alice sees it', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  const carolName = await signUp(carol, undefined, undefined, { live: true });
  const aliceName = await signUp(alice, undefined, undefined, { live: true });
  const id = await createNote(alice, 'Plans', 'one\ntwo');
  await share(alice, carolName, 'editor');

  // carol's socket passes through here: her messages to the server can be held, as on a slow
  // network, so that what she types is still on its way when alice makes her a viewer.
  let hold = false;
  const held: (string | Buffer)[] = [];
  let toServer: ((message: string | Buffer) => void) | undefined;
  await carol.routeWebSocket('**/api/collab', (socket) => {
    const server = socket.connectToServer();
    toServer = (message) => server.send(message);
    socket.onMessage((message) => (hold ? held.push(message) : server.send(message)));
  });
  await carol.goto(`/notes/${id}`);
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' and three');
  await expectText(alice, 'one\ntwo and three');

  hold = true;
  await carol.keyboard.type(' and four');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saving…`);
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel(`Role of ${carolName}`).selectOption('viewer');
  await expect(people.getByRole('status')).toHaveText(`${carolName} can now read it.`);

  // carol is told at once: no more typing, and the editor says so.
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · You can now only read this note`);
  await expect(contentBox(carol)).toHaveAttribute('contenteditable', 'false');
  await expect(carol.getByLabel('Title')).toHaveAttribute('readonly', '');
  await expect(carol.getByText('Shared with you: you can read this note.')).toBeVisible();
  await expect(carol.getByRole('button', { name: 'Save' })).toHaveCount(0);
  // What she typed before being told reaches the server after the change, which drops it: it stays
  // on her screen, and she is told why the others do not have it.
  hold = false;
  for (const message of held.splice(0)) toServer!(message);
  await expect(
    carol.getByText(
      'Your last changes had not reached the others when you were made a viewer: they stay here for you to copy, and reach the others if you are made an editor again.',
    ),
  ).toBeVisible();
  await expectText(carol, 'one\ntwo and three and four');
  await contentBox(carol).click();
  await carol.keyboard.type('!!');
  await expectText(carol, 'one\ntwo and three and four');
  // She still sees alice's typing.
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.type('zero\n');
  await expectText(carol, 'zero\none\ntwo and three and four');
  await expectText(alice, 'zero\none\ntwo and three');
  await expectAccessible(carol, 'made viewer while editing live');

  // Made editor again: carol types at once, what was dropped reaches alice, and so does what follows.
  await people.getByLabel(`Role of ${carolName}`).selectOption('editor');
  await expect(people.getByRole('status')).toHaveText(`${carolName} can now read and edit it.`);
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);
  await expect(contentBox(carol)).toHaveAttribute('contenteditable', 'true');
  await expect(carol.getByText('Shared with you: you can read and edit this note.')).toBeVisible();
  await expectText(alice, 'zero\none\ntwo and three and four');
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' and five');
  await expectText(alice, 'zero\none\ntwo and three and four and five');
  await expectText(carol, 'zero\none\ntwo and three and four and five');
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

test('Save pressed while the note is still joining live editing: the text is saved once, not twice', async ({
  browser,
}) => {
  const page = await person(browser);
  await signUp(page, undefined, undefined, { live: true });
  const id = await createNote(page, 'Once', 'one');
  // The server's messages on the socket are held, as on a slow network: the session cannot join
  // yet. A message is the note's id, its type and (for type 0, sync) the sync message's type.
  const kindOf = (message: string | Buffer) =>
    Buffer.isBuffer(message) && message[0] === id.length ? `${message[1 + id.length]}.${message[2 + id.length]}` : '';
  let hold = true;
  const held: (string | Buffer)[] = [];
  let release: (() => void) | undefined;
  let answered: () => void = () => {};
  const syncAnswered = new Promise<void>((resolve) => {
    answered = resolve;
  });
  await page.routeWebSocket('**/api/collab', (socket) => {
    const server = socket.connectToServer();
    const toPage = (message: string | Buffer) => {
      socket.send(message);
      // The server's answer to the page's sync (SyncStep2) is with the page: the session syncs.
      if (kindOf(message) === '0.1') answered();
    };
    release = () => {
      hold = false;
      for (const message of held.splice(0)) toPage(message);
    };
    server.onMessage((message) => (hold ? held.push(message) : toPage(message)));
  });
  // The save reaches the server; its answer is held on the way back.
  let answer: (() => Promise<void>) | undefined;
  const saved = new Promise<void>((resolve) => {
    void page.route(
      (url) => url.pathname === `/api/notes/${id}/versions`,
      async (route) => {
        if (route.request().method() !== 'POST') return route.fallback();
        const response = await route.fetch();
        answer = () => route.fulfill({ response });
        resolve();
      },
    );
  });
  await page.goto(`/notes/${id}`);
  await expectText(page, 'one');
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' and two');
  await page.getByRole('button', { name: 'Save' }).click();
  await saved;
  // The server took the save into the shared text as an edit (an update, 0.2), still held.
  await expect.poll(() => held.some((message) => kindOf(message) === '0.2')).toBe(true);

  // The session syncs, with the save's edit, before the save's answer arrives; then the answer.
  release!();
  await syncAnswered;
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
  await answer!();
  await expect(liveState(page)).toHaveText('Live · Saved');
  await expectText(page, 'one and two');
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.reload();
  await expect(liveState(page)).toHaveText('Live · Saved');
  await expectText(page, 'one and two');
});

test('a live connection lost and back: what the others typed meanwhile and before is there once, with what was typed here while away', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  // alice's socket goes through the test, which can cut it (a network blip, a server restarting).
  let cut: (() => void) | undefined;
  await alice.routeWebSocket('**/api/collab', (socket) => {
    socket.connectToServer();
    cut = () => socket.close({ code: 1006 });
  });
  const { aliceName, carolName } = await editTogether(alice, carol, 'Blip');
  // carol types, and alice sees it live: in the shared text, in no version yet.
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' and more');
  await expectText(alice, 'one\ntwo\nthree and more');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);

  cut!();
  await expect(liveState(alice)).toHaveCount(0);
  // While alice is away: carol goes on, alice writes at the start.
  await carol.keyboard.type(' again');
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.type('So: ');

  // Back (the editor tries again by itself): each piece once.
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`, { timeout: 20_000 });
  const together = 'So: one\ntwo\nthree and more again';
  await expectText(alice, together);
  await expectText(carol, together);
});

test('the device goes offline while live: the status says so at once, typing goes on, and back online each piece is there once', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  const { carolName } = await editTogether(alice, carol, 'Train');
  await alice.context().setOffline(true);
  // Not "Live" for the socket's own time-out: put away at once, the offline line shown.
  await expect(liveState(alice)).toHaveCount(0);
  await expect(alice.getByText(/Offline/).first()).toBeVisible();
  await contentBox(alice).click();
  await alice.keyboard.press('Control+Home');
  await alice.keyboard.type('On the train: ');
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' meanwhile');

  await alice.context().setOffline(false);
  await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`);
  const together = 'On the train: one\ntwo\nthree meanwhile';
  await expectText(alice, together);
  await expectText(carol, together);
});

test('made viewer while live, then the socket goes: the editor stays read-only and saves nothing until it is live again', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  // carol's socket goes through the test: it can cut it, and keep her off until let back.
  let cut: (() => void) | undefined;
  let away = false;
  await carol.routeWebSocket('**/api/collab', (socket) => {
    if (away) return socket.close({ code: 1006 });
    socket.connectToServer();
    cut = () => socket.close({ code: 1006 });
  });
  const { id, aliceName, carolName } = await editTogether(alice, carol, 'Read only');
  const writes: string[] = [];
  carol.on('request', (request) => {
    if (request.method() !== 'GET' && request.url().includes(`/api/notes/${id}`)) writes.push(request.method());
  });
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel(`Role of ${carolName}`).selectOption('viewer');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · You can now only read this note`);

  away = true;
  cut!();
  await expect(liveState(carol)).toHaveCount(0);
  await expect(contentBox(carol)).toHaveAttribute('contenteditable', 'false');
  await expect(carol.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await expect(carol.getByText('Shared with you: you can read this note.')).toBeVisible();
  // Ctrl+S saves nothing either.
  await contentBox(carol).click();
  await carol.keyboard.press('Control+s');
  await expect(liveState(carol)).toHaveCount(0);
  // Let back: live again by itself, as a viewer; nothing was sent to be saved meanwhile.
  away = false;
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · You can now only read this note`, {
    timeout: 20_000,
  });
  expect(writes).toEqual([]);
});

// With autosave on (the app's default), alice's editor saves through the API 2 s after the cut, as
// the reconnection is under way: the server takes that text (carol's " C" in it) in as an edit.
for (const autosave of [false, true])
  test(`cut while a keystroke here waits for the server and carol’s typing has come in: back live, each is there once (autosave ${autosave ? 'on' : 'off'})`, async ({
    browser,
  }) => {
    const alice = await person(browser);
    const carol = await person(browser);
    // alice's messages to the server can be held (a slow uplink) and her socket cut.
    let hold = false;
    let cut: (() => void) | undefined;
    await alice.routeWebSocket('**/api/collab', (socket) => {
      const server = socket.connectToServer();
      socket.onMessage((message) => {
        if (!hold) server.send(message);
      });
      cut = () => socket.close({ code: 1006 });
    });
    const { carolName } = await editTogether(alice, carol, 'Crossing', { autosave });
    hold = true;
    await contentBox(alice).click();
    await alice.keyboard.press('Control+Home');
    await alice.keyboard.press('End');
    await alice.keyboard.type(' A');
    // carol's typing reaches alice while hers is still on its way, then alice's socket goes.
    await contentBox(carol).click();
    await carol.keyboard.press('Control+End');
    await carol.keyboard.type(' C');
    await expectText(alice, 'one A\ntwo\nthree C');
    await expectText(carol, 'one\ntwo\nthree C');
    cut!();
    hold = false;
    await expect(liveState(alice)).toHaveCount(0);

    await expect(liveState(alice)).toHaveText(`Live with ${carolName} · Saved`, { timeout: 20_000 });
    await expectText(alice, 'one A\ntwo\nthree C');
    await expectText(carol, 'one A\ntwo\nthree C');
  });

test('made viewer with typing dropped, then the socket goes: back live, the dropped text is still there, and reaches alice once carol is an editor again', async ({
  browser,
}) => {
  const alice = await person(browser);
  const carol = await person(browser);
  let hold = false;
  const held: (string | Buffer)[] = [];
  let toServer: ((message: string | Buffer) => void) | undefined;
  let cut: (() => void) | undefined;
  await carol.routeWebSocket('**/api/collab', (socket) => {
    const server = socket.connectToServer();
    toServer = (message) => server.send(message);
    socket.onMessage((message) => (hold ? held.push(message) : server.send(message)));
    cut = () => socket.close({ code: 1006 });
  });
  const { aliceName, carolName } = await editTogether(alice, carol, 'Dropped');
  hold = true;
  await contentBox(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type(' kept');
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel(`Role of ${carolName}`).selectOption('viewer');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · You can now only read this note`);
  // Her typing reaches the server after the change, which drops it; then her socket goes.
  hold = false;
  for (const message of held.splice(0)) toServer!(message);
  await expectText(carol, 'one\ntwo\nthree kept');
  cut!();
  await expect(liveState(carol)).toHaveCount(0);

  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · You can now only read this note`, {
    timeout: 20_000,
  });
  await expectText(carol, 'one\ntwo\nthree kept');
  await expectText(alice, 'one\ntwo\nthree');
  await people.getByLabel(`Role of ${carolName}`).selectOption('editor');
  await expect(liveState(carol)).toHaveText(`Live with ${aliceName} · Saved`);
  await expectText(alice, 'one\ntwo\nthree kept');
  await expectText(carol, 'one\ntwo\nthree kept');
});
