import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { Secret, TOTP } from 'otpauth';
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

// A service of this file's own, with mail (addresses are verified by the link mailed to them), so
// that `admin` is its only administrator: the refusal to demote or disable the last one is certain.
const test = base.extend<object, { team: { service: Service; mail: MailServer } }>({
  team: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this destructuring; it has none
    async ({}, use) => ownServiceWithMail('admin', {}, use),
    { scope: 'worker', timeout: 90_000 },
  ],
  // Pages here talk to this file's service only (and the worker's shared one is not started for them).
  baseURL: async ({ team }, use) => use(team.service.origin),
});

/** The API as a script calls it (the member's own settings are not what this file tests). */
async function call(origin: string, method: string, url: string, token?: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${origin}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function ok(response: Promise<Response>, status: number): Promise<unknown> {
  const res = await response;
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return text === '' ? null : JSON.parse(text);
}

/**
 * A member with a verified e-mail address and 3,000 bytes of attachments. Returns its name, address
 * and an access token.
 */
async function member(team: {
  service: Service;
  mail: MailServer;
}): Promise<{ name: string; email: string; token: string }> {
  const { origin, crossOrigin } = team.service;
  const name = uniqueName('m');
  const email = `${name}@example.test`;
  await ok(call(origin, 'POST', '/api/auth/signup', undefined, { username: name, password: GOOD_PASSWORD }), 201);
  const { access_token: token } = (await ok(
    call(origin, 'POST', '/api/auth/login', undefined, { username: name, password: GOOD_PASSWORD }),
    200,
  )) as { access_token: string };
  await ok(call(origin, 'PUT', '/api/auth/owner/email', token, { email, password: GOOD_PASSWORD }), 202);
  // Mails of earlier members (their new-factor notices) may come first: this one's confirmation link.
  let confirm: URL | undefined;
  while (confirm === undefined) {
    const message = await team.mail.next();
    if (message.text?.includes('/confirm-email?token=') && JSON.stringify(message.to).includes(email))
      confirm = linkIn(message, `${crossOrigin}/confirm-email?token=`);
  }
  await ok(
    call(origin, 'POST', '/api/auth/owner/email/confirm', undefined, { token: confirm.searchParams.get('token') }),
    200,
  );
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(3000)], { type: 'application/octet-stream' }), 'data.bin');
  const upload = await fetch(`${origin}/api/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(upload.status, await upload.text()).toBe(201);
  return { name, email, token };
}

/** Turns on the member's authenticator app (after its login in the browser, which would ask for a code). */
async function enrolTotp(origin: string, token: string): Promise<void> {
  const { secret } = (await ok(
    call(origin, 'POST', '/api/auth/2fa/totp', token, { password: GOOD_PASSWORD }),
    200,
  )) as { secret: string };
  const code = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
  await ok(call(origin, 'POST', '/api/auth/2fa/totp/confirm', token, { code }), 200);
}

/** Answers the next confirmation dialog, after checking what it asks. */
function answerNext(page: Page, accept: boolean, says: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    page.once('dialog', (dialog) => {
      try {
        expect(dialog.message()).toMatch(says);
        void (accept ? dialog.accept() : dialog.dismiss()).then(resolve, reject);
      } catch (error) {
        void dialog.dismiss();
        reject(error);
      }
    });
  });
}

/** What the page says of the last action (the connection line outside the main region is a status too). */
function said(page: Page) {
  return page.getByRole('main').getByRole('status');
}

/** What the facts list says for `term` (a dt/dd pair). */
function fact(page: Page, term: string) {
  return page.locator('dl.facts dt', { hasText: term }).locator('xpath=following-sibling::dd[1]');
}

async function openAccount(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  const link = page.getByRole('region', { name: 'Users' }).getByRole('link', { name, exact: true });
  // By keyboard: the username in the list is a link to its page.
  await link.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: new RegExp(`^${name}`) })).toBeVisible();
  expect(new URL(page.url()).pathname).toMatch(/^\/admin\/users\/[0-9a-f-]{36}$/);
}

async function noSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
}

async function contextFor(browser: Browser, origin: string, width: number, scheme: 'light' | 'dark') {
  return browser.newContext({
    baseURL: origin,
    viewport: { width, height: width < 500 ? 740 : 900 },
    colorScheme: scheme,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
}

test('Administration is a chunk of its own: loaded when an administrator opens it, never with the first screen', async ({
  page,
}) => {
  // Vite's manifest names the chunk's files (the build the tests run against: fixtures.ts).
  const dist = process.env.VELLUM_E2E_DIST ?? path.resolve(import.meta.dirname, '../../dist');
  const manifest = JSON.parse(fs.readFileSync(path.join(dist, 'public/.vite/manifest.json'), 'utf8')) as Record<
    string,
    { file: string; css?: string[] }
  >;
  const chunk = manifest['src/admin/screens.tsx'];
  expect(chunk, 'the Administration chunk').toBeDefined();
  const files = [chunk!.file, ...(chunk!.css ?? [])].map((file) => `/${file}`);
  const loaded: string[] = [];
  page.on('request', (request) => loaded.push(new URL(request.url()).pathname));
  await logIn(page, ADMIN.username, ADMIN.password);
  expect(loaded.filter((file) => files.includes(file))).toEqual([]);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
  expect(loaded.filter((file) => files.includes(file)).sort()).toEqual([...files].sort());
});

test("an account's page reads the account in one request; an address with no account says so", async ({ page }) => {
  const asked: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/api/auth/admin/')) asked.push(`${request.method()} ${pathname}`);
  });
  await logIn(page, ADMIN.username, ADMIN.password);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  const link = page.getByRole('region', { name: 'Users' }).getByRole('link', { name: ADMIN.username, exact: true });
  await expect(link).toBeVisible();
  asked.length = 0;
  await link.click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`${ADMIN.username} (you)`);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  expect(asked).toEqual([`GET /api/auth/admin/${id}`]);

  // An id no account has (deleted, or never made), and one that is not an id at all (mistyped).
  const unknown = randomUUID();
  for (const address of [unknown, 'not-an-account']) {
    asked.length = 0;
    await page.goto(`/admin/users/${address}`);
    await expect(page.getByRole('heading', { level: 1, name: 'No such account' })).toBeVisible();
    await expect(said(page)).toHaveText('This account does not exist, or was deleted.');
    await expect(page.getByRole('alert')).toHaveCount(0);
    expect(asked).toEqual([`GET /api/auth/admin/${address}`]);
  }
  await expectAccessible(page, 'account page of an unknown account');
});

for (const [width, scheme] of [
  [375, 'dark'],
  [1280, 'light'],
] as const) {
  test(`an account's page at ${width} px (${scheme}): what it shows, and every action, by keyboard`, async ({
    browser,
    team,
  }) => {
    const { origin } = team.service;
    const someone = await member(team);
    // The member is signed in on a device of their own, its page open.
    const theirs = await contextFor(browser, origin, width, scheme);
    const them = await theirs.newPage();
    await logIn(them, someone.name);
    await enrolTotp(origin, someone.token);

    const context = await contextFor(browser, origin, width, scheme);
    const page = await context.newPage();
    await logIn(page, ADMIN.username, ADMIN.password);
    await openAccount(page, someone.name);
    await expect(fact(page, 'E-mail')).toHaveText(`${someone.email} (verified)`);
    await expect(fact(page, 'Role')).toHaveText('Member');
    await expect(fact(page, 'Status')).toHaveText('Active');
    await expect(fact(page, 'Second factors')).toHaveText('authenticator app');
    await expect(fact(page, 'Last login')).not.toHaveText('Never');
    await expect(fact(page, 'Storage')).toHaveText("2.9 KiB used of the server's default quota");
    await noSidewaysScroll(page);
    await expectAccessible(page, `account page, ${width} px ${scheme}`);

    // Make and remove an administrator; removing asks first. Keys only, and the focus stays put.
    const makeAdmin = page.getByRole('button', { name: 'Make administrator' });
    await makeAdmin.focus();
    await page.keyboard.press('Enter');
    await expect(said(page)).toHaveText(`“${someone.name}” is now an administrator.`);
    await expect(fact(page, 'Role')).toHaveText('Administrator');
    const removeAdmin = page.getByRole('button', { name: 'Remove administrator' });
    await expect(removeAdmin).toBeFocused();
    let asked = answerNext(page, false, /Remove “.+” from the administrators\?/);
    await page.keyboard.press('Enter');
    await asked;
    await expect(fact(page, 'Role')).toHaveText('Administrator');
    asked = answerNext(page, true, /Remove “.+” from the administrators\?/);
    await page.keyboard.press('Enter');
    await asked;
    await expect(said(page)).toHaveText(`“${someone.name}” is no longer an administrator.`);
    await expect(fact(page, 'Role')).toHaveText('Member');

    // The quota: a wrong number is said beside the field; a right one is kept (a reload shows it).
    const quota = page.getByLabel('Quota in MiB');
    await quota.fill('lots');
    await quota.press('Enter');
    await expect(quota).toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByText('Enter a number of MiB, 0 or more.')).toBeVisible();
    await quota.fill('5');
    await quota.press('Enter');
    await expect(said(page)).toHaveText(`“${someone.name}” may store 5 MiB.`);
    await expect(fact(page, 'Storage')).toHaveText('2.9 KiB used of 5 MiB');
    await page.reload();
    await expect(fact(page, 'Storage')).toHaveText('2.9 KiB used of 5 MiB');
    await expect(page.getByLabel('Quota in MiB')).toHaveValue('5');
    await page.getByRole('button', { name: 'Use the default' }).click();
    await expect(said(page)).toHaveText(`“${someone.name}” has the server's default quota again.`);
    await expect(fact(page, 'Storage')).toHaveText("2.9 KiB used of the server's default quota");

    // Disabling asks, then ends the member's open session: its page is signed out at once,
    // and a login is refused like a wrong password until the account is enabled.
    asked = answerNext(page, true, /^Disable “.+”\? Every session of it ends at once/);
    await page.getByRole('button', { name: 'Disable account' }).click();
    await asked;
    await expect(said(page)).toHaveText(`“${someone.name}” disabled: its sessions ended.`);
    await expect(fact(page, 'Status')).toHaveText('Disabled: cannot log in');
    // The member's open page is told by its event stream, which the disabling ended (a click on
    // the page meanwhile would race the sign-out: the link it aims at leaves with the notes).
    await expect(them.getByRole('status').filter({ hasText: 'Your session has ended.' })).toBeVisible();
    await them.getByLabel('Username').fill(someone.name);
    await them.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
    await them.getByRole('button', { name: 'Log in' }).click();
    await expect(them.getByRole('alert')).toContainText('Invalid credentials');
    await page.getByRole('button', { name: 'Enable account' }).click();
    await expect(said(page)).toHaveText(`“${someone.name}” enabled: it can log in again.`);
    await expect(fact(page, 'Status')).toHaveText('Active');

    // Second factors removed (asked first): the password alone signs in.
    asked = answerNext(page, true, /^Remove every second factor of “.+”/);
    await page.getByRole('button', { name: 'Remove second factors' }).click();
    await asked;
    await expect(said(page)).toHaveText(`Second factors of “${someone.name}” removed.`);
    await expect(fact(page, 'Second factors')).toHaveText('None');
    await expect(page.getByRole('button', { name: 'Remove second factors' })).toHaveCount(0);

    // A password reset link, copied, that sets a new password on another device.
    await page.getByRole('button', { name: 'Make a password reset link' }).click();
    const link = await page.getByRole('textbox', { name: /^Password reset link/ }).inputValue();
    expect(link).toMatch(/\/reset\?token=[A-Za-z0-9_-]+$/);
    await page.getByRole('button', { name: 'Copy link' }).click();
    await expect(said(page)).toHaveText('Link copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await noSidewaysScroll(page);
    await expectAccessible(page, `account page with a reset link, ${width} px ${scheme}`);
    await them.goto(new URL(link).pathname + new URL(link).search);
    await them.getByLabel('New password').fill('amber-Orchard-compass-77-softly');
    await them.getByRole('button', { name: 'Set new password' }).click();
    await expect(them.getByRole('status')).toHaveText(
      `Password changed for ${someone.name}. Every session was signed out: log in with the new password.`,
    );

    // The server's refusals are shown in its words: the only administrator cannot demote or
    // disable itself.
    await page.getByRole('link', { name: '← Administration' }).click();
    await openAccount(page, ADMIN.username);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(`${ADMIN.username} (you)`);
    asked = answerNext(page, true, /You will no longer see Administration\./);
    await page.getByRole('button', { name: 'Remove administrator' }).click();
    await asked;
    await expect(page.getByRole('alert')).toHaveText(
      'Cannot demote or disable the last administrator; make another account an administrator first',
    );
    asked = answerNext(page, true, /You will be signed out here too\./);
    await page.getByRole('button', { name: 'Disable account' }).click();
    await asked;
    await expect(page.getByRole('alert')).toHaveText(
      'Cannot demote or disable the last administrator; make another account an administrator first',
    );
    await expect(fact(page, 'Role')).toHaveText('Administrator');
    await expect(fact(page, 'Status')).toHaveText('Active');
    await expectAccessible(page, `account page with a refusal, ${width} px ${scheme}`);

    // Deleting asks; Cancel keeps the account, OK deletes it and goes back to the list.
    await page.getByRole('link', { name: '← Administration' }).click();
    await openAccount(page, someone.name);
    asked = answerNext(page, false, /^Delete the account “.+” and all its notes, for good\?$/);
    await page.getByRole('button', { name: 'Delete account' }).click();
    await asked;
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(someone.name);
    asked = answerNext(page, true, /^Delete the account “.+” and all its notes, for good\?$/);
    await page.getByRole('button', { name: 'Delete account' }).click();
    await asked;
    await expect(page).toHaveURL(/\/admin$/);
    await expect(page.getByRole('status').filter({ hasText: 'was deleted' })).toHaveText(
      `The account “${someone.name}” was deleted.`,
    );
    await expect(page.getByRole('listitem', { name: someone.name, exact: true })).toHaveCount(0);
    // Its address now leads nowhere.
    await page.goBack();
    await expect(page.getByRole('heading', { name: 'No such account' })).toBeVisible();
    await context.close();
    await theirs.close();
  });
}
