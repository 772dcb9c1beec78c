import type { Page } from '@playwright/test';
import { linkIn, type MailServer } from '../../test/helpers/mail-server';
import {
  ADMIN,
  expect,
  expectAccessible,
  GOOD_PASSWORD,
  logIn,
  type Service,
  ownServiceWithMail,
  test as base,
  uniqueName,
} from './fixtures';

// A service of this file's own with SIGNUP=closed (only administrators make accounts) and mail, so
// that an account's set-up link can arrive the way a person would get it.
const test = base.extend<object, { closed: { service: Service; mail: MailServer } }>({
  closed: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this destructuring; it has none
    async ({}, use) => ownServiceWithMail('closed', { SIGNUP: 'closed' }, use),
    { scope: 'worker', timeout: 90_000 },
  ],
  baseURL: async ({ closed }, use) => use(closed.service.origin),
});

async function noSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
}

for (const width of [375, 1280]) {
  test(`SIGNUP=closed at ${width} px: no sign-up offered; an administrator makes the account, its set-up link is mailed, and the person chooses a password with it`, async ({
    browser,
    closed,
  }) => {
    const { origin, crossOrigin } = closed.service;
    const viewport = { width, height: width < 500 ? 740 : 900 };

    // Someone arriving: the login page offers no sign-up, and /signup says who makes accounts.
    const personContext = await browser.newContext({ baseURL: origin, viewport });
    const person = await personContext.newPage();
    await person.goto('/login');
    await expect(person.getByRole('button', { name: 'Log in' })).toBeVisible();
    await expect(person.getByRole('link', { name: 'Create an account' })).toHaveCount(0);
    await person.goto('/signup');
    await expect(person.getByRole('status')).toHaveText(
      'Sign-up is closed on this server: an administrator creates accounts.',
    );
    await expect(person.getByLabel('Password', { exact: true })).toHaveCount(0);
    await noSidewaysScroll(person);

    // The administrator makes the account with the person's address.
    const adminContext = await browser.newContext({ baseURL: origin, viewport });
    const admin = await adminContext.newPage();
    await logIn(admin, ADMIN.username, ADMIN.password);
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    const users = admin.getByRole('region', { name: 'Users' });
    const name = uniqueName('made');
    const email = `${name}@example.test`;
    await users.getByLabel("New account's username").fill(name);
    await users.getByLabel("New account's e-mail (optional)").fill(email);
    await users.getByRole('button', { name: 'Create account' }).click();
    await expect(admin.getByRole('main').getByRole('status').filter({ hasText: 'Account created' })).toHaveText(
      `Account created: its set-up link was mailed to ${email}.`,
    );
    const shown = await admin.getByRole('textbox', { name: 'Set-up link' }).inputValue();
    expect(shown).toMatch(/\/setup\?token=[A-Za-z0-9_-]+$/);
    await expect(users.getByRole('listitem', { name, exact: true })).toBeVisible();
    await noSidewaysScroll(admin);
    await expectAccessible(admin, `administration with a set-up link, ${width} px`);

    // The mail (earlier tests' mails may come first) carries the same link.
    let link: URL | undefined;
    while (link === undefined) {
      const message = await closed.mail.next();
      if (JSON.stringify(message.to).includes(email)) link = linkIn(message, `${crossOrigin}/setup?token=`);
    }
    expect(link.href).toBe(shown);

    // The person opens it, chooses a password, and is signed in; the password works from then on.
    await person.goto(link.pathname + link.search);
    await expect(person.getByRole('heading', { name: 'Choose your password', level: 1 })).toBeVisible();
    await expect(person.getByLabel('Username')).toHaveCount(0);
    await noSidewaysScroll(person);
    await expectAccessible(person, `set-up page, ${width} px`);
    await person.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await person.getByRole('button', { name: 'Set password' }).click();
    await expect(person.getByRole('button', { name: 'New note' })).toBeVisible();
    await personContext.close();

    const later = await browser.newContext({ baseURL: origin, viewport });
    await logIn(await later.newPage(), name);
    await later.close();

    // The link was single use.
    const again = await browser.newContext({ baseURL: origin, viewport });
    const retry = await again.newPage();
    await retry.goto(link.pathname + link.search);
    await retry.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await retry.getByRole('button', { name: 'Set password' }).click();
    await expect(retry.getByRole('alert')).toBeVisible();
    await expect(retry.getByRole('button', { name: 'New note' })).toHaveCount(0);
    await again.close();
    await adminContext.close();
  });
}

// The e-mail confirmation, on the same service's mail: an account adds an address in Account, the
// link arrives by mail, and following it confirms the address (once).
for (const width of [375, 1280]) {
  test(`at ${width} px: an address added in Account is confirmed by the mailed link, which works once`, async ({
    browser,
    closed,
  }) => {
    const { origin, crossOrigin } = closed.service;
    const context = await browser.newContext({ baseURL: origin, viewport: { width, height: 800 } });
    const page = await context.newPage();
    await logIn(page, ADMIN.username, ADMIN.password);
    await page.getByRole('link', { name: 'Account' }).click();
    const section = page.getByRole('region', { name: 'E-mail address' });
    // On a phone the sections of Account start folded.
    const heading = section.getByRole('button', { name: 'E-mail address', exact: true });
    if ((await heading.getAttribute('aria-expanded')) === 'false') await heading.click();
    const email = `${uniqueName('confirm')}@example.test`;
    await section.getByLabel('E-mail address', { exact: true }).fill(email);
    await section.getByLabel('Password (to confirm it is you)').fill(ADMIN.password);
    await section.getByRole('button', { name: 'Save e-mail address' }).click();
    await expect(section.getByRole('status')).toHaveText(
      `We sent a confirmation link to ${email}; the address counts once you follow it.`,
    );

    let link: URL | undefined;
    while (link === undefined) {
      const message = await closed.mail.next();
      if (JSON.stringify(message.to).includes(email)) link = linkIn(message, `${crossOrigin}/confirm-email?token=`);
    }
    await page.goto(link.pathname + link.search);
    await expect(page.getByRole('status')).toHaveText(`Your e-mail address ${email} is confirmed.`);
    await expectAccessible(page, `e-mail confirmed, ${width} px`);
    await page.getByRole('link', { name: 'Go to your notes' }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    if ((await heading.getAttribute('aria-expanded')) === 'false') await heading.click();
    await expect(section.getByText(`Confirmed: ${email}. Password reset links go there.`)).toBeVisible();

    // Followed again, the link is spent, and the page says so.
    await page.goto(link.pathname + link.search);
    await expect(page.getByRole('alert')).toHaveText(
      'This link is invalid, has expired or was already used; ask for a new one',
    );
    await context.close();
  });
}
