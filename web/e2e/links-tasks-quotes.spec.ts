import type { Browser, Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

// Issue #42, the last of item 10 and item 8's wikilinks: [[links]] between notes (offered as you
// type `[[`, followed from the rendered note, a missing note said and offered), task boxes ticked
// in the rendered note (saved as a version, merged with a save made elsewhere), Enter twice ending
// a quote, and folder names refused in plain words by their field. Each at 375 px in the light
// scheme and at 1280 px in the dark one, axe-clean: every width and every scheme once. All four
// pairings cost the suite over a minute of two busy cores; a11y.spec.ts runs the four.

const LAYOUTS = [
  ['375 px', 'light', { width: 375, height: 740 }],
  ['1280 px', 'dark', { width: 1280, height: 800 }],
] as const;

function eachLayout(name: string, body: (page: Page, phone: boolean, browser: Browser) => Promise<void>): void {
  for (const [device, scheme, viewport] of LAYOUTS) {
    test(`${name} (${device}, ${scheme})`, async ({ browser }) => {
      const context = await browser.newContext({ colorScheme: scheme, viewport });
      try {
        await body(await context.newPage(), viewport.width < 700, browser);
      } finally {
        await context.close();
      }
    });
  }
}

/** The rendered note (reading view). */
const reading = (page: Page) => page.locator('article.reading');
const toolbarButton = (page: Page, name: string) =>
  page.getByRole('form', { name: 'Note' }).locator('.toolbar').getByRole('button', { name, exact: true });

eachLayout(
  '[[links]]: typing [[ offers titles, a link opens its note, a missing one is offered',
  async (page, phone) => {
    await signUp(page);
    const groceries = await createNote(page, 'Groceries', 'milk and eggs');
    // On a phone the open note takes the screen; New note is on the list's.
    if (phone) await page.getByRole('link', { name: '← Notes' }).click();
    await page.getByRole('button', { name: 'New note' }).click();
    await page.getByLabel('Title').fill('Plan');
    // Keys go to CodeMirror, not to the plain box shown while it loads (no completion, no quote Enter there).
    await expectContent(page, '');
    await contentBox(page).click();
    await page.keyboard.type('Buy from [[Groc');
    const offered = page.getByRole('option', { name: 'Groceries' });
    await expect(offered).toBeVisible();
    await expectAccessible(page, 'titles offered for a [[link]]');
    await page.keyboard.press('Enter');
    await page.keyboard.type(' then [[Holiday ideas|the holiday]]');
    await expectContent(page, 'Buy from [[Groceries]] then [[Holiday ideas|the holiday]]');
    await page.keyboard.press('Control+s');
    await expect(page.getByText('Saved as version 1')).toBeVisible();

    await toolbarButton(page, 'Edit').click();
    const link = reading(page).getByRole('link', { name: 'Groceries' });
    await expect(link).toBeVisible();
    await expect(reading(page).getByRole('link', { name: 'the holiday' })).toBeVisible();
    await expectAccessible(page, 'a note with [[links]]');
    await link.click();
    await expect(page).toHaveURL(new RegExp(`/notes/${groceries}$`));
    await expect(page.getByLabel('Title')).toHaveValue('Groceries');
    // The lookup replaced its own address: Back is the note the link was in.
    await page.goBack();
    await expect(page.getByLabel('Title')).toHaveValue('Plan');
    await toolbarButton(page, 'Edit').click();

    await reading(page).getByRole('link', { name: 'the holiday' }).click();
    await expect(page.getByText('There is no note called “Holiday ideas” yet.')).toBeVisible();
    await expectAccessible(page, 'a [[link]] to a note not written yet');
    await page.getByRole('link', { name: 'Create “Holiday ideas”' }).click();
    await expect(page).toHaveURL(/\/notes\/new\?/);
    await expect(page.getByLabel('Title')).toHaveValue('Holiday ideas');
  },
);

eachLayout(
  'task boxes tick in the reading view and save a version, merged with a save made elsewhere',
  async (page) => {
    await signUp(page);
    const text = [
      '- [ ] dishes',
      '- [x] laundry',
      '  - [ ] fold it',
      '',
      '```',
      '- [ ] not a task',
      '```',
      '',
      '> - [ ] call the bank',
      '',
      'last line',
    ];
    const id = await createNote(page, 'Chores', text.join('\n'));
    await toolbarButton(page, 'Edit').click();
    const dishes = reading(page).getByRole('checkbox', { name: 'dishes' });
    await expect(dishes).toBeEnabled();
    await expect(dishes).not.toBeChecked();
    await expectAccessible(page, 'task boxes in the reading view');
    await dishes.click();
    await expect(page.getByText('Saved as version 2')).toBeVisible();
    await expect(dishes).toBeChecked();
    await reading(page).getByRole('checkbox', { name: 'laundry' }).click();
    await expect(page.getByText('Saved as version 3')).toBeVisible();

    // Meanwhile another tab changes the last line: the next tick merges with it, nothing is lost.
    const other = await page.context().newPage();
    await other.goto(`/notes/${id}`);
    await expectContent(other, ['- [x] dishes', '- [ ] laundry', ...text.slice(2)].join('\n'));
    await contentBox(other).locator('.cm-line').last().click();
    await other.keyboard.press('End');
    await other.keyboard.type(', changed elsewhere');
    await other.keyboard.press('Control+s');
    await expect(other.getByText('Saved as version 4')).toBeVisible();
    await other.close();

    await reading(page).getByRole('checkbox', { name: 'call the bank' }).click();
    // Merged on the server, or (the live event came first) saved on top of version 4: either way, both kept.
    await expect(page.getByText(/Saved as version 5/)).toBeVisible();
    await expect(reading(page).getByText('last line, changed elsewhere')).toBeVisible();
    await toolbarButton(page, 'Edit').click();
    await expectContent(
      page,
      [
        '- [x] dishes',
        '- [ ] laundry',
        '  - [ ] fold it',
        '',
        '```',
        '- [ ] not a task',
        '```',
        '',
        '> - [x] call the bank',
        '',
        'last line, changed elsewhere',
      ].join('\n'),
    );
  },
);

eachLayout('Enter twice on an empty quote line ends the quote', async (page) => {
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await expectContent(page, '');
  await contentBox(page).click();
  await page.keyboard.type('> Be kind');
  await page.keyboard.press('Enter');
  await expectContent(page, '> Be kind\n> ');
  await page.keyboard.press('Enter');
  await page.keyboard.type('Not quoted');
  await expectContent(page, '> Be kind\n\nNot quoted');
  await toolbarButton(page, 'Edit').click();
  await expect(reading(page).locator('blockquote')).toHaveText('Be kind');
  await expect(reading(page).locator('p', { hasText: 'Not quoted' })).toBeVisible();
  await expectAccessible(page, 'a quote ended by Enter twice');
});

eachLayout('folder names refused in plain words, by the name field', async (page, phone) => {
  await signUp(page);
  if (phone) await page.getByRole('button', { name: 'Folders and tags' }).click();
  const folders = page.getByRole('navigation', { name: 'Folders' });
  await folders.getByRole('button', { name: 'New folder' }).click();
  const field = page.getByLabel('Folder name');
  await field.fill('Work');
  await page.getByRole('button', { name: 'Create folder' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Work' })).toBeVisible();
  if (phone) await page.getByRole('button', { name: 'Folders and tags' }).click();

  // Beside "Work" (inside it, a new folder goes into it): so from the top level.
  await folders.getByRole('link', { name: 'All notes' }).click();
  if (phone) await page.getByRole('button', { name: 'Folders and tags' }).click();
  await folders.getByRole('button', { name: 'New folder' }).click();
  const create = page.getByRole('button', { name: 'Create folder' });
  const cases: Array<[string, string]> = [
    ['work', 'There is already a folder called “work” here. Choose another name.'],
    ['   ', 'Give the folder a name.'],
    ['Plans/2027', 'A folder name cannot contain / (nor any of / \\ < > : " | ? *).'],
    ['x'.repeat(101), 'A folder name can be at most 100 characters; this one has 101.'],
    ['Notes.', 'A folder name cannot end with a dot.'],
    ['CON', '“CON” is a name Windows keeps for a device, so the folder could not be synced there. Choose another.'],
  ];
  for (const [name, message] of cases) {
    await field.fill(name);
    await create.click();
    await expect(field).toHaveAccessibleDescription(message);
    await expect(field).toHaveAttribute('aria-invalid', 'true');
    await expect(field).toBeFocused();
  }
  await expectAccessible(page, 'a folder name refused');
  // Typing clears it; a good name is made.
  await field.fill('Home');
  await expect(field).not.toHaveAttribute('aria-invalid', 'true');
  await create.click();
  await expect(page.getByRole('heading', { level: 1, name: 'Home' })).toBeVisible();
});
