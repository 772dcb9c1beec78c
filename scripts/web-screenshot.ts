// Regenerates README's pictures (`npm run screenshot:web` after `npm run build`): starts the built
// service on a free port with a throwaway SQLite file, makes two folders and writes five tagged
// notes through the client in the system's Chromium, and photographs at 1280×640 (light scheme) the
// sidebar, the list with its previews and the editor with its preview (docs/web-client.png), then
// the same note in the reading view (docs/web-client-reading.png), and that note on a 375×812
// phone in the dark scheme, in the reading view (docs/web-client-phone-dark.png).
import fs from 'node:fs';
import path from 'node:path';
import { PASSWORD, repo, signUp, startShotService } from './screenshot-service.js';

const out = path.join(repo, 'docs/web-client.png');
const reading = path.join(repo, 'docs/web-client-reading.png');
const phone = path.join(repo, 'docs/web-client-phone-dark.png');
const { base, browser, stop } = await startShotService();

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 640 }, colorScheme: 'light' });
  await signUp(page, base, 'ada');
  for (const folder of ['Travel', 'Work']) {
    // At the top level: a folder made while another is open goes inside it.
    await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'All notes' }).click();
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.getByLabel('Folder name').fill(folder);
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('heading', { level: 1, name: folder }).waitFor();
  }
  await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'All notes' }).click();
  const notes: Array<[string, string]> = [
    ['Reading list', '- The Mythical Man-Month\n- A Pattern Language\n\n#books'],
    ['Groceries', '- [ ] Oat milk\n- [x] Lemons\n- [ ] Bread from the market #errands'],
    [
      'Garden plan',
      'Tomatoes by the south wall, herbs in pots near the door. Compost in **March**. Seeds: [[Groceries]].',
    ],
    ['Trip to Lisbon', '## Day 1\n\nTram 28, then the castle. #travel/portugal'],
    [
      'Meeting notes',
      '# Weekly sync\n\nDecisions:\n\n1. Ship the **web client** on Monday\n2. Keep *every* version\n\n- [x] Virtualised list\n- [ ] Reading view screenshots\n- [ ] Book the venue, see [[Trip to Lisbon]]\n\n> Notes nobody can lose.\n\n```ts\nconst saved = await save(note, { ifMatch: version });\n```\n\nSee [the docs](https://example.com/docs). #project/vellum',
    ],
  ];
  for (const [title, content] of notes) {
    await page.getByRole('button', { name: 'New note' }).click();
    await page.waitForURL((url) => url.pathname === '/notes/new');
    // Polled from here: a function evaluated in the page would need the 'unsafe-eval' the CSP refuses.
    for (
      let i = 0;
      i < 200 &&
      (await page
        .getByLabel('Title')
        .inputValue()
        .catch(() => '')) !== 'Untitled';
      i += 1
    )
      await page.waitForTimeout(50);
    await page.getByLabel('Title').fill(title);
    await page.getByRole('textbox', { name: 'Content', exact: true }).fill(content);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as version 1').waitFor();
    await page.waitForURL((url) => /\/notes\/[0-9a-f-]{36}$/.test(url.pathname));
  }
  await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Work' });
  await page.getByRole('button', { name: 'Move', exact: true }).click();
  await page.getByText('Moved to “Work”.').waitFor();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await page.getByRole('button', { name: 'Unpin' }).waitFor();
  await page.locator('.cm-editor').waitFor();
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByRole('region', { name: 'Preview' }).getByRole('heading', { name: 'Weekly sync' }).waitFor();
  await page.screenshot({ path: out });
  // The reading view: the note rendered, Edit to change it.
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('region', { name: 'Note' }).getByRole('heading', { name: 'Weekly sync' }).waitFor();
  await page.locator('.hljs').first().waitFor();
  await page.screenshot({ path: reading });
  const noteUrl = page.url();
  // Closed first: open, it would be a second person in the note's live session ("Live with ada").
  await page.close();
  // A phone in the dark: the same note, read (its task boxes tick here, its [[links]] open notes).
  const dark = await browser.newPage({ viewport: { width: 375, height: 812 }, colorScheme: 'dark' });
  await dark.goto(`${base}/login`);
  await dark.getByLabel('Username').fill('ada');
  await dark.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await dark.getByRole('button', { name: 'Log in' }).click();
  await dark.getByRole('button', { name: 'New note' }).waitFor();
  await dark.goto(noteUrl);
  await dark.locator('.cm-editor').waitFor();
  await dark.getByRole('button', { name: 'Edit' }).click();
  await dark.getByRole('region', { name: 'Note' }).getByRole('heading', { name: 'Weekly sync' }).waitFor();
  await dark.locator('.hljs').first().waitFor();
  await dark.screenshot({ path: phone });
  await browser.close();
  for (const file of [out, reading, phone])
    console.log(`Wrote ${path.relative(process.cwd(), file)} (${fs.statSync(file).size} bytes)`);
} finally {
  stop();
}
