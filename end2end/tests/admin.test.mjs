// The admin pages for tiers and nodes, labs and users, and LLM backfill, in
// real Chromium against the real server (local executor): each change
// made on a form shows in the page, reaches the API, and a mistake is
// named on the form. Researchers are refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSignedIn, signIn, api, until, SCREENSHOTS } from '../harness.mjs';

let server, browser, demo, admin;
before(async () => {
  ({ server, browser, demo, admin } = await startSignedIn());
});
after(async () => {
  // backfill instances outlive the server by design: switch it off first
  if (admin) {
    await api(admin, server.base, 'PATCH', '/v1/admin/backfill', { enabled: false }).catch(() => {});
    await until('no backfill', async () => (await api(admin, server.base, 'GET', '/v1/backfill')).body.instances.length === 0).catch(() => {});
  }
  await browser?.close();
  await server?.stop();
});

async function open(page, path) {
  // wait for the wasm to hydrate the forms
  await page.goto(server.base + path, { waitUntil: 'networkidle' });
}

async function shots(page, name) {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-1440.png`), fullPage: true });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-375.png`), fullPage: true });
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('researchers are refused from every admin page', async () => {
  for (const path of ['/admin/cluster', '/admin/people', '/admin/backfill']) {
    await demo.goto(server.base + path);
    await demo.getByText('this page is for admins').waitFor();
  }
});

test('tiers and nodes: add a tier and a node, drain and remove it, deactivate the tier', async () => {
  const page = admin;
  await open(page, '/admin/cluster');
  const tierForm = page.getByTestId('add-tier');
  await tierForm.getByLabel('Name (as Slurm\'s GPU type)').fill('a100');
  await tierForm.getByLabel('Display name').fill('A100 80GB');
  await tierForm.getByLabel('VRAM (GB)').fill('80');
  await tierForm.getByLabel('TFLOPS (FP32)').fill('19.5');
  await tierForm.getByLabel('Order (higher = better)').fill('30');
  await tierForm.getByLabel('Max GPUs per job').fill('4');
  await tierForm.getByRole('button', { name: 'Add tier' }).click();
  await tierForm.getByText('Tier a100 added.').waitFor();
  await page.getByTestId('tiers').getByText('A100 80GB').waitFor();

  const nodeForm = page.getByTestId('add-node');
  await nodeForm.getByLabel('Name').fill('node-a100');
  await nodeForm.getByLabel('GPU tier').selectOption('a100');
  await nodeForm.getByLabel('Number of GPUs').fill('4');
  await nodeForm.getByRole('button', { name: 'Add node' }).click();
  await nodeForm.getByText('Node node-a100 added with 4 GPU(s).').waitFor();
  const row = page.getByTestId('nodes').locator('tr', { hasText: 'node-a100' });
  await row.getByText('a100#3').waitFor();
  const placements = (await api(page, server.base, 'GET', '/v1/placements')).body;
  assert.ok(placements.some((p) => p.node === 'node-a100' && p.tier === 'a100' && p.capacity === 4), JSON.stringify(placements));
  await shots(page, 'admin-cluster');

  // a duplicate is named on the form
  await nodeForm.getByLabel('Name').fill('node-4090');
  await nodeForm.getByRole('button', { name: 'Add node' }).click();
  await nodeForm.getByRole('alert').getByText(/already exists/).waitFor();

  await row.getByRole('button', { name: 'Drain' }).click();
  // nothing runs there: drained at once, and it can be taken back
  await row.getByText('DRAINED', { exact: true }).waitFor();
  await row.getByRole('button', { name: 'Resume' }).click();
  await row.getByText('UP', { exact: true }).waitFor();
  await row.getByRole('button', { name: 'Drain' }).click();
  await row.getByText('DRAINED', { exact: true }).waitFor();
  await row.getByRole('button', { name: 'Remove' }).click();
  await until('node removed', async () => (await page.getByTestId('nodes').locator('tr', { hasText: 'node-a100' }).count()) === 0);

  const tierRow = page.getByTestId('tiers').locator('tr', { hasText: 'A100 80GB' });
  await tierRow.getByRole('button', { name: 'Deactivate' }).click();
  await tierRow.getByText('inactive').waitFor();
  const tiers = (await api(page, server.base, 'GET', '/v1/tiers')).body;
  assert.equal(tiers.find((t) => t.name === 'a100').active, false);

  const edit = page.getByTestId('edit-tier');
  await edit.getByLabel('Tier').selectOption('rtx3080ti');
  await edit.getByLabel('TFLOPS (FP32)').fill('35.5');
  await edit.getByRole('button', { name: 'Save tier' }).click();
  await edit.getByText('Tier rtx3080ti saved.').waitFor();
  await page.getByTestId('tiers').locator('tr', { hasText: 'rtx3080ti' }).getByText('35.5').waitFor();
});

test('labs and users: add a lab and a user who can sign in; a short password is refused', async () => {
  const page = admin;
  await open(page, '/admin/people');
  const labForm = page.getByTestId('add-lab');
  await labForm.getByLabel('Name').fill('vision-lab');
  await labForm.getByRole('button', { name: 'Add lab' }).click();
  await labForm.getByText('Lab vision-lab added.').waitFor();

  const userForm = page.getByTestId('add-user');
  await userForm.getByLabel('Username').fill('alice');
  await userForm.getByLabel('Password (10 characters or more)').fill('short');
  await userForm.getByLabel('Lab').selectOption('vision-lab');
  // the browser's own minlength check would stop a plain submit: lift it to see the server's answer
  await userForm.getByLabel('Password (10 characters or more)').evaluate((el) => el.removeAttribute('minlength'));
  await userForm.getByRole('button', { name: 'Add user' }).click();
  await userForm.getByRole('alert').getByText(/password: must be 10/).waitFor();
  await userForm.getByLabel('Password (10 characters or more)').fill('alice-password-1');
  await userForm.getByLabel('Concurrent jobs (default 2)').fill('3');
  await userForm.getByRole('button', { name: 'Add user' }).click();
  await userForm.getByText('User alice added to vision-lab.').waitFor();
  const row = page.getByTestId('users').locator('tr', { hasText: 'alice' });
  await row.getByText('vision-lab').waitFor();
  await shots(page, 'admin-people');

  const edit = page.getByTestId('edit-user');
  await edit.getByLabel('User').selectOption('alice');
  await edit.getByLabel('Concurrent jobs').fill('5');
  await edit.getByRole('button', { name: 'Save user' }).click();
  await edit.getByText('User alice saved.').waitFor();
  await row.getByRole('cell', { name: '5', exact: true }).waitFor();

  const alice = await (await browser.newContext()).newPage();
  await signIn(alice, server.base, 'alice', 'alice-password-1');
  const me = (await api(alice, server.base, 'GET', '/v1/me')).body;
  assert.deepEqual([me.lab, me.max_concurrent], ['vision-lab', 5]);
});

test('backfill: switched on from the page, instances appear on idle GPUs; off reclaims them', async () => {
  const page = admin;
  await open(page, '/admin/backfill');
  await page.getByTestId('backfill-state').getByText('Off').waitFor();
  const form = page.getByTestId('backfill-form');
  // on without a command is refused with the reason
  await form.getByLabel('Serve the LLM on idle GPUs').check();
  await form.getByRole('button', { name: 'Save backfill settings' }).click();
  await page.getByRole('alert').getByText(/needs a command/).waitFor();
  await page.waitForLoadState('networkidle'); // the form reloads after every save

  await form.getByLabel('Command (bash; serve on $JPU_BACKFILL_PORT)').fill('exec python3 -m http.server "$JPU_BACKFILL_PORT" --bind 127.0.0.1');
  await form.getByLabel('Idle seconds before deploying').fill('0');
  await form.getByLabel('Serve the LLM on idle GPUs').check();
  await form.getByRole('button', { name: 'Save backfill settings' }).click();
  await page.getByText('Backfill settings saved: on.').waitFor();
  await until('instances on the idle GPUs', async () => (await page.getByTestId('instances').locator('tbody tr').count()) >= 1);
  await page.getByTestId('backfill-state').getByText('On').waitFor();
  await shots(page, 'admin-backfill');

  await form.getByLabel('Serve the LLM on idle GPUs').uncheck();
  await form.getByRole('button', { name: 'Save backfill settings' }).click();
  await page.getByText('Backfill settings saved: off.').waitFor();
  await until('instances reclaimed', async () => (await page.getByTestId('instances').locator('tbody tr').count()) === 0);
});
