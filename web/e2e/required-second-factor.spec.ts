import type { Page } from '@playwright/test';
import { Secret, TOTP } from 'otpauth';
import {
  expect,
  expectAccessible,
  GOOD_PASSWORD,
  type Service,
  ownService,
  test as base,
  uniqueName,
} from './fixtures';

// A service of this file's own with REQUIRE_SECOND_FACTOR=all: every account sets up a second
// factor before anything else (the other specs' service requires none).
const test = base.extend<object, { strict: Service }>({
  strict: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this destructuring; it has none
    async ({}, use) => ownService('rsf', { REQUIRE_SECOND_FACTOR: 'all' }, use),
    { scope: 'worker', timeout: 90_000 },
  ],
  baseURL: async ({ strict }, use) => use(strict.origin),
});

const codeFor = (secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();

async function noSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
}

for (const width of [375, 1280]) {
  test(`REQUIRE_SECOND_FACTOR=all at ${width} px: a new account is sent to set up a second factor first, and reaches its notes once it has`, async ({
    browser,
    strict,
  }) => {
    const context = await browser.newContext({
      baseURL: strict.origin,
      viewport: { width, height: width < 500 ? 740 : 900 },
    });
    const page = await context.newPage();
    const name = uniqueName('rsf');
    await page.goto('/signup');
    await page.getByLabel('Username').fill(name);
    await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();

    // Signed in, but only enrolment (and Log out) is offered: no notes, no way past it yet.
    await expect(page.getByRole('heading', { name: 'Set up a second factor', level: 1 })).toBeVisible();
    await expect(page.getByRole('button', { name: 'New note' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Continue', exact: true })).toHaveCount(0);
    await noSidewaysScroll(page);
    await expectAccessible(page, `enrolment, ${width} px`);
    // Going straight to the notes changes nothing.
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Set up a second factor', level: 1 })).toBeVisible();

    const section = page.getByRole('region', { name: 'Two-step sign-in' });
    await section.getByRole('button', { name: 'Set up authenticator app' }).click();
    await section.getByLabel('Current password').fill(GOOD_PASSWORD);
    await section.getByRole('button', { name: 'Continue' }).click();
    const secret = (await section.locator('code.secret').textContent())!.replace(/\s/g, '');
    await section.getByLabel('One-time code').fill(codeFor(secret));
    await section.getByRole('button', { name: 'Turn on' }).click();
    await expect(section.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem')).toHaveCount(10);
    await noSidewaysScroll(page);

    // Enrolled: Continue leads to the notes, which now answer.
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Set up a second factor' })).toHaveCount(0);
    await context.close();
  });
}
