import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from '@playwright/test';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  type ProviderAccount,
  startProvider,
  type TestProvider,
} from '../../test/helpers/oidc';
import { ADMIN, expect, expectAccessible, freePort, logIn, startService, test } from './fixtures';

/**
 * Runs `body` against a service of its own with single sign-on ("Example ID") through a real
 * OpenID Connect provider (oidc-provider from npm, its development login form) started here with
 * `accounts`; the other specs' service has none. `env` adds settings (SIGNUP, say).
 */
async function withSingleSignOn(
  accounts: Record<string, ProviderAccount>,
  env: Record<string, string>,
  body: (origin: string, provider: TestProvider) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const provider = await startProvider(`${origin}/api/auth/oidc/callback`, accounts);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-e2e-sso-'));
  try {
    const { child } = await startService(path.join(dir, 'vellum.db'), {
      port,
      env: {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
        OIDC_NAME: 'Example ID',
        ...env,
      },
    });
    try {
      await body(origin, provider);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  } finally {
    await provider.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The provider's own pages: its login form (any password), then its consent page. */
async function signInAtProvider(page: Page, provider: TestProvider, login: string): Promise<void> {
  await page.waitForURL((url) => url.origin === provider.issuer);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.locator('button[type="submit"]').click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

async function newPage(browser: Browser, origin: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: origin });
  return context.newPage();
}

test("Sign in with the provider: the button, the provider's pages, back signed in as a new account", async ({
  page,
}) => {
  const accounts = { 'sub-dana': { preferred_username: 'dana.sso', email: 'dana@example.test' } };
  await withSingleSignOn(accounts, {}, async (origin, provider) => {
    await page.goto(`${origin}/login`);
    await expect(page.getByRole('link', { name: 'Forgot password?' })).toBeVisible();
    await page.getByRole('button', { name: 'Sign in with Example ID' }).click();
    await signInAtProvider(page, provider, 'sub-dana');

    // Back at Vellum, signed in with the refresh cookie the callback set.
    await page.waitForURL(`${origin}/`);
    await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
    await page.goto(`${origin}/account`);
    await expect(page.getByText('Signed in as dana.sso')).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'E-mail address' })).toBeVisible();
  });
});

test('SIGNUP=invite: "Sign up with Example ID" from an invitation link makes the account; without one, the login page says an invitation is needed', async ({
  browser,
}) => {
  const accounts = {
    'sub-erin': { preferred_username: 'erin.sso' },
    'sub-frank': { preferred_username: 'frank.sso' },
  };
  await withSingleSignOn(accounts, { SIGNUP: 'invite' }, async (origin, provider) => {
    const admin = await newPage(browser, origin);
    await logIn(admin, ADMIN.username, ADMIN.password);
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
    const invitations = admin.getByRole('region', { name: 'Invitations' });
    await invitations.getByRole('button', { name: 'Create invitation' }).click();
    const link = await invitations.getByRole('textbox', { name: 'Invitation link' }).inputValue();
    expect(link.startsWith(`${origin}/signup?invitation=`)).toBe(true);
    await expect(invitations.getByRole('listitem', { name: /^Invitation / })).toHaveCount(1);

    // The invitation link, then the provider instead of a password: back in Vellum, signed in.
    const erin = await newPage(browser, origin);
    await erin.goto(link);
    await expect(erin.getByText('You were invited: choose a username and a password.')).toBeVisible();
    await erin.getByRole('button', { name: 'Sign up with Example ID' }).click();
    await signInAtProvider(erin, provider, 'sub-erin');
    await erin.waitForURL(`${origin}/`);
    await expect(erin.getByRole('button', { name: 'New note' })).toBeVisible();
    await erin.goto('/account');
    await expect(erin.getByText('Signed in as erin.sso')).toBeVisible();

    // Used: no longer open, and the account is listed.
    await admin.reload();
    await expect(invitations.getByText('No open invitations.')).toBeVisible();
    await expect(
      admin.getByRole('region', { name: 'Users' }).getByRole('listitem', { name: 'erin.sso' }),
    ).toBeVisible();

    // Without an invitation: sign-up offers nothing, and the provider's answer brings the
    // person back to the login page, which says why; no account is made.
    const frank = await newPage(browser, origin);
    await frank.goto('/signup');
    await expect(frank.getByRole('status')).toHaveText(
      'Sign-up on this server needs an invitation: open the link an administrator gave you.',
    );
    await expect(frank.getByRole('button', { name: /^Sign (up|in) with/ })).toHaveCount(0);
    await frank.goto('/login');
    await frank.getByRole('button', { name: 'Sign in with Example ID' }).click();
    await signInAtProvider(frank, provider, 'sub-frank');
    await frank.waitForURL(`${origin}/login?sso_error=invitation_required`);
    await expect(frank.getByRole('alert')).toHaveText(
      'Single sign-on: you need an invitation to join this server. Open the invitation link an administrator sent you and sign up from there (an invitation that was already used, revoked or expired needs a new one).',
    );
    await expect(frank.getByRole('button', { name: 'Log in' })).toBeVisible();
    await admin.reload();
    await expect(
      admin.getByRole('region', { name: 'Users' }).getByRole('listitem', { name: 'erin.sso' }),
    ).toBeVisible();
    await expect(admin.getByRole('region', { name: 'Users' }).getByRole('listitem', { name: 'frank.sso' })).toHaveCount(
      0,
    );
    for (const page of [admin, erin, frank]) await page.context().close();
  });
});

for (const width of [375, 1280]) {
  test(`PASSWORD_LOGIN=off at ${width} px: sign-up offers the provider only, and it makes the account; the login page says passwords are for administrators`, async ({
    browser,
  }) => {
    const accounts = { 'sub-gwen': { preferred_username: `gwen${width}.sso` } };
    await withSingleSignOn(accounts, { PASSWORD_LOGIN: 'off' }, async (origin, provider) => {
      const context = await browser.newContext({
        baseURL: origin,
        viewport: { width, height: width < 500 ? 740 : 900 },
      });
      const page = await context.newPage();
      await page.goto('/login');
      await expect(page.getByText('Passwords sign in administrators only on this server.')).toBeVisible();
      await expect(page.getByRole('button', { name: 'Sign in with Example ID' })).toBeVisible();
      await page.getByRole('link', { name: 'Create an account' }).click();

      // No password form: an account made with one could never sign in (the server refuses it too).
      await expect(page.getByRole('heading', { name: 'Create your Vellum account', level: 1 })).toBeVisible();
      await expect(
        page.getByText('Accounts on this server sign in with Example ID; passwords are turned off.'),
      ).toBeVisible();
      await expect(page.getByLabel('Password', { exact: true })).toHaveCount(0);
      await expect(page.getByRole('button', { name: 'Sign up', exact: true })).toHaveCount(0);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await expectAccessible(page, `sign-up with passwords off, ${width} px`);

      await page.getByRole('button', { name: 'Sign up with Example ID' }).click();
      await signInAtProvider(page, provider, 'sub-gwen');
      await page.waitForURL(`${origin}/`);
      await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
      await page.goto('/account');
      await expect(page.getByText(`Signed in as gwen${width}.sso`)).toBeVisible();
      await context.close();
    });
  });
}

test('Forgot password? leads to a request that answers alike for anyone; /reset without a valid token says so', async ({
  page,
  service,
}) => {
  await page.goto(`${service.origin}/login`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByLabel('Username or e-mail address').fill('nobody-at-all');
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await expect(page.getByRole('status')).toContainText('If this account has a verified e-mail address');
  await page.goto(`${service.origin}/reset?token=not-a-real-token`);
  await page.getByLabel('New password').fill('amber-Orchard-compass-77-softly');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByRole('alert')).toContainText('This link is invalid, has expired or was already used');
});
