import {
  expect,
  expectAccessible,
  GOOD_PASSWORD,
  type Service,
  ownService,
  test as base,
  uniqueName,
} from './fixtures';

// Issue #42, item 10: a new account starts with a welcome note saying what Vellum is and how to
// begin. The other specs' service turns it off (fixtures.ts, WELCOME_NOTE=off) to count notes from
// none; this file runs a service of its own with the default (on), as a fresh install has it.
const test = base.extend<object, { welcoming: Service }>({
  welcoming: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this destructuring; it has none
    async ({}, use) => ownService('welcome', { WELCOME_NOTE: 'on' }, use),
    { scope: 'worker', timeout: 90_000 },
  ],
  // Pages here talk to this file's service only.
  baseURL: async ({ welcoming }, use) => use(welcoming.origin),
});

for (const [width, scheme] of [
  [375, 'dark'],
  [1280, 'light'],
] as const) {
  test(`at ${width} px, ${scheme}: a new account opens on its welcome note, which says what Vellum is and how to begin`, async ({
    browser,
    welcoming,
  }) => {
    const context = await browser.newContext({
      baseURL: welcoming.origin,
      viewport: { width, height: 800 },
      colorScheme: scheme,
    });
    const page = await context.newPage();
    await page.goto('/signup');
    await page.getByLabel('Username').fill(uniqueName());
    await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    const rows = page.getByRole('list', { name: 'Notes, pinned first, then most recent' }).locator('.row-title');
    await expect(rows).toHaveText(['Welcome to Vellum']);
    await expectAccessible(page, `the list with the welcome note at ${width} px, ${scheme}`);
    await page.getByRole('link', { name: /Welcome to Vellum/ }).click();
    await expect(page.getByLabel('Title')).toHaveValue('Welcome to Vellum');
    const text = page.getByRole('textbox', { name: 'Content', exact: true });
    await expect(text).toContainText('Vellum keeps your notes in Markdown, with **every version** saved');
    await expect(text).toContainText('Write your first note with **New note**');
    await expectAccessible(page, `the welcome note at ${width} px, ${scheme}`);
    await context.close();
  });
}
