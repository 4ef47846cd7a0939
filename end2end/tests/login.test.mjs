// Sign in as admin, see the demo tiers and nodes, sign out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, startBrowser, signIn, ADMIN_PASSWORD, SCREENSHOTS } from '../harness.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('admin signs in, sees the demo cluster, signs out', async () => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  await page.goto(server.base + '/');
  assert.equal(new URL(page.url()).pathname, '/login', 'anonymous visitors are sent to sign in');

  await signIn(page, server.base, 'admin', ADMIN_PASSWORD);
  const tiers = page.getByTestId('tiers');
  await tiers.getByText('RTX 4090').waitFor();
  await tiers.getByText('RTX 3080 Ti').waitFor();
  const nodes = page.getByTestId('nodes');
  await nodes.getByText('node-4090').waitFor();
  await nodes.getByText('node-3080').waitFor();
  assert.equal(await page.getByTestId('who').textContent(), 'admin');
  assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 1, 'admins see the Admin link');
  await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-admin-1440.png'), fullPage: true });

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(server.base + '/login');
  await page.goto(server.base + '/');
  assert.equal(new URL(page.url()).pathname, '/login', 'signed out for real');
  assert.deepEqual(errors, [], 'no script errors (hydration worked)');
});

test('a wrong password is refused with a message', async () => {
  const page = await browser.newPage({ viewport: { width: 375, height: 800 } });
  await page.goto(server.base + '/login');
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('Wrong username or password.').waitFor();
  await page.screenshot({ path: join(SCREENSHOTS, 'login-error-375.png'), fullPage: true });
});
