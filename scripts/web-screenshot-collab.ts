// docs/co-editing.png (`npm run screenshot:collab` after `npm run build`): two people editing one
// note live, each seeing the others' cursors with their names. Starts the built service on a free
// port with a throwaway SQLite file; alice (1280×720, light scheme) writes a short note and shares
// it with carol and dave, who each type in a browser context of their own (carol adds a line and
// selects a word, dave adds to the list); the picture is alice's screen with both their cursors.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { repo, signUp, startShotService } from './screenshot-service.js';

const out = path.join(repo, 'docs/co-editing.png');
const { base, browser, stop } = await startShotService({ WELCOME_NOTE: 'off' });
const content = (page: Page) => page.getByRole('textbox', { name: 'Content', exact: true });

async function person(browser: Browser, username: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, colorScheme: 'light' });
  const page = await context.newPage();
  await signUp(page, base, username);
  return page;
}

try {
  const carol = await person(browser, 'carol');
  const dave = await person(browser, 'dave');
  const alice = await person(browser, 'alice');
  await alice.getByRole('button', { name: 'New note' }).click();
  await alice.waitForURL((url) => url.pathname === '/notes/new');
  await alice.getByLabel('Title').fill('Trip to the coast');
  await content(alice).fill(
    '# Trip to the coast\n\n## Packing\n\n- Rain jackets\n- Map of the harbour\n- Sun cream\n\n## Day one\n\nTrain at 9:12, then the ferry.\nLunch at the fish market',
  );
  await alice.getByRole('button', { name: 'Save' }).click();
  await alice.waitForURL((url) => /\/notes\/[0-9a-f-]{36}$/.test(url.pathname));
  await alice.getByRole('button', { name: 'Share' }).click();
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel('Username').fill('carol');
  await people.getByLabel('Role', { exact: true }).selectOption('editor');
  await people.getByRole('button', { name: 'Add person' }).click();
  await people.getByRole('status').getByText('Shared with carol').waitFor();
  await people.getByLabel('Username').fill('dave');
  await people.getByRole('button', { name: 'Add person' }).click();
  await people.getByRole('status').getByText('Shared with dave').waitFor();
  await alice.getByRole('button', { name: 'Share' }).click();
  for (const page of [carol, dave]) {
    await page.goto(alice.url());
    await page
      .getByRole('status')
      .getByText(/^Live with /)
      .waitFor();
  }

  // carol adds a line and selects a word; dave adds to the packing list.
  await content(carol).click();
  await carol.keyboard.press('Control+End');
  await carol.keyboard.type('\nWalk to the lighthouse at sunset', { delay: 15 });
  for (let i = 0; i < 6; i += 1) await carol.keyboard.press('Shift+ArrowLeft');
  await content(dave).click();
  await dave.keyboard.press('Control+Home');
  for (let i = 0; i < 6; i += 1) await dave.keyboard.press('ArrowDown');
  await dave.keyboard.press('End');
  // Enter continues the list ("- ").
  await dave.keyboard.type('\nBinoculars', { delay: 15 });
  for (const name of ['carol', 'dave']) await alice.locator('.cm-ySelectionInfo', { hasText: name }).waitFor();
  await alice
    .getByRole('status')
    .getByText(/^Live with .* · Saved$/)
    .waitFor();
  await alice.screenshot({ path: out });
  await browser.close();
  console.log(`Wrote ${path.relative(process.cwd(), out)} (${fs.statSync(out).size} bytes)`);
} finally {
  stop();
}
