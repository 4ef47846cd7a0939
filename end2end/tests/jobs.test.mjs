// A researcher's day: submit a job and watch it run with its log, see a
// 2-GPU job's reservation in the queue, cancel a running job, meet
// maintenance (banner, submit refused), all in real Chromium against the
// real server with the local executor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startSignedIn, signIn, api, until, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

let server, browser, demo, admin;
const cleanup = [];
before(async () => {
  ({ server, browser, demo, admin } = await startSignedIn());
});
after(async () => {
  // running jobs outlive the server by design: stop ours
  for (const [page, id] of cleanup) await api(page, server.base, 'POST', `/v1/jobs/${id}/cancel`).catch(() => {});
  await until('cleanup', async () => {
    for (const [page, id] of cleanup) {
      const { body } = await api(page, server.base, 'GET', `/v1/jobs/${id}`);
      if (!['COMPLETED', 'FAILED', 'CANCELLED'].includes(body.state)) return false;
    }
    return true;
  }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

async function stateOf(page) {
  return (await page.getByTestId('state').textContent()).trim();
}

test('submit a job, watch it go queued → running → completed with its log', async () => {
  const page = demo;
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.base + '/submit');
  await page.getByLabel('Name').fill('hello-e2e');
  await page.getByLabel('Script (run with bash)').fill('echo hello-from-e2e\nsleep 3\necho finished-ok');
  await page.getByLabel('GPUs', { exact: true }).fill('1');
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.waitForURL(/\/jobs\/\d+$/);
  const seen = new Set();
  await until('COMPLETED', async () => {
    seen.add(await stateOf(page));
    return seen.has('COMPLETED');
  });
  assert.ok(seen.has('RUNNING'), `the page showed it running: ${[...seen]}`);
  await page.getByTestId('log').getByText('finished-ok').waitFor();
  assert.match(await page.getByTestId('log').textContent(), /hello-from-e2e/);
  assert.equal(await page.getByTestId('attempts').locator('tbody tr').count(), 1);
  await page.screenshot({ path: join(SCREENSHOTS, 'job-completed-1440.png'), fullPage: true });
  await page.setViewportSize({ width: 375, height: 800 });
  await page.screenshot({ path: join(SCREENSHOTS, 'job-completed-375.png'), fullPage: true });
  await page.setViewportSize({ width: 1440, height: 900 });
  assert.deepEqual(errors, []);
});

test('a request no placement can fit is refused on the form, before any wait', async () => {
  const page = demo;
  await page.goto(server.base + '/submit');
  await page.getByLabel('Name').fill('too-big');
  await page.getByLabel('Script (run with bash)').fill('true');
  await page.getByLabel('GPUs', { exact: true }).fill('3');
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.getByTestId('submit-error').getByText(/no placement can ever fit 3 GPU/).waitFor();
  assert.equal(new URL(page.url()).pathname, '/submit');
  await page.screenshot({ path: join(SCREENSHOTS, 'submit-no-fit-1440.png'), fullPage: true });
});

test('a 2-GPU job shows its reservation progress in the queue; cancel a running job', async () => {
  // three 1-GPU jobs: demo's and one of admin's fill node-4090, admin's
  // other takes a 3080 Ti (the highest tier is filled first, best fit)
  const hold = (name) => ({ name, command: 'sleep 120', num_gpus: 1 });
  const holds = [];
  for (const [page, name] of [[demo, 'hold-mine'], [admin, 'hold-b'], [admin, 'hold-c']]) {
    const { status, body } = await api(page, server.base, 'POST', '/v1/jobs', hold(name));
    assert.equal(status, 201);
    holds.push([page, body.id]);
    cleanup.push([page, body.id]);
    await until(`job ${body.id} running`, async () => (await api(page, server.base, 'GET', `/v1/jobs/${body.id}`)).body.state === 'RUNNING');
  }
  const { body: wide } = await api(demo, server.base, 'POST', '/v1/jobs', { name: 'wide', command: 'echo wide', num_gpus: 2 });
  cleanup.push([demo, wide.id]);

  // rank 1 reserves on the 4090 node (highest tier) with nothing idle yet
  await demo.goto(server.base + '/queue');
  const row = demo.getByTestId('global-queue').locator(`tr[data-job="${wide.id}"]`);
  await row.getByText('waiting for 2 more GPUs on node-4090 (rtx4090), reserved 0/2').waitFor();
  // one 4090 frees up: the reservation absorbs it; the page refreshes by itself
  assert.equal((await api(admin, server.base, 'POST', `/v1/jobs/${holds[1][1]}/cancel`)).status, 202);
  await row.getByText('waiting for 1 more GPU on node-4090 (rtx4090), reserved 1/2').waitFor();
  assert.equal(await row.locator('progress').getAttribute('value'), '1');
  await demo.screenshot({ path: join(SCREENSHOTS, 'queue-reservation-1440.png'), fullPage: true });
  await demo.setViewportSize({ width: 375, height: 800 });
  await demo.screenshot({ path: join(SCREENSHOTS, 'queue-reservation-375.png'), fullPage: true });
  await demo.setViewportSize({ width: 1440, height: 900 });

  // demo cancels its own running job from its page; the wide job then starts
  const mine = holds[0][1];
  await demo.goto(`${server.base}/jobs/${mine}`);
  await demo.getByRole('button', { name: 'Cancel job…' }).click();
  await demo.getByRole('button', { name: 'Yes, cancel it' }).click();
  await until('CANCELLED', async () => (await stateOf(demo)) === 'CANCELLED');
  await until('the wide job to start', async () => {
    const { body } = await api(demo, server.base, 'GET', `/v1/jobs/${wide.id}`);
    return ['RUNNING', 'COMPLETED'].includes(body.state);
  });
  await demo.screenshot({ path: join(SCREENSHOTS, 'job-cancelled-1440.png'), fullPage: true });
  // nothing of ours keeps running into the maintenance test
  assert.equal((await api(admin, server.base, 'POST', `/v1/jobs/${holds[2][1]}/cancel`)).status, 202);
  for (const [page, id] of [holds[2], [demo, wide.id]]) {
    await until(`job ${id} over`, async () => ['COMPLETED', 'CANCELLED'].includes((await api(page, server.base, 'GET', `/v1/jobs/${id}`)).body.state));
  }
});

test('maintenance from the admin page: phases advance, researchers see the banner and cannot submit', async () => {
  await demo.goto(server.base + '/admin');
  await demo.getByText('this page is for admins').waitFor();
  assert.equal(await demo.getByRole('link', { name: 'Admin' }).count(), 0, 'no Admin link for researchers');

  await admin.goto(server.base + '/admin');
  await admin.getByLabel('Message shown to users').fill('GPU driver upgrade');
  await admin.getByRole('button', { name: 'Start maintenance' }).click();
  // nothing runs, so DRAINING and BACKFILL_RECOVERY pass by themselves
  await until('ACTIVE', async () => (await admin.getByTestId('phase').textContent()) === 'ACTIVE');
  await admin.getByTestId('audit').getByText('maintenance.start').waitFor();
  await admin.screenshot({ path: join(SCREENSHOTS, 'admin-maintenance-active-1440.png'), fullPage: true });

  await demo.goto(server.base + '/submit');
  await demo.getByRole('status').getByText('GPU driver upgrade').waitFor();
  await demo.getByTestId('submit-paused').waitFor();
  await demo.getByLabel('Name').fill('during-maintenance');
  await demo.getByLabel('Script (run with bash)').fill('true');
  await demo.getByRole('button', { name: 'Submit' }).click();
  await demo.getByTestId('submit-error').getByText(/paused for maintenance/).waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'maintenance-submit-1440.png'), fullPage: true });
  await demo.setViewportSize({ width: 375, height: 800 });
  await demo.screenshot({ path: join(SCREENSHOTS, 'maintenance-submit-375.png'), fullPage: true });
  await demo.setViewportSize({ width: 1440, height: 900 });

  await admin.getByRole('button', { name: 'End maintenance' }).click();
  await until('NORMAL', async () => (await admin.getByTestId('phase').textContent()) === 'NORMAL');
  await demo.goto(server.base + '/queue');
  assert.equal(await demo.locator('.banner').count(), 0, 'no banner once maintenance ends');
});

test('the dashboard shows what each GPU does, in words too', async () => {
  const { body } = await api(demo, server.base, 'POST', '/v1/jobs', { name: 'busy', command: 'sleep 60', num_gpus: 1 });
  cleanup.push([demo, body.id]);
  await until('running', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${body.id}`)).body.state === 'RUNNING');
  await demo.goto(server.base + '/');
  const nodes = demo.getByTestId('nodes');
  assert.equal(await nodes.locator('[data-use="research"]').count(), 1);
  assert.equal(await nodes.locator('[data-use="idle"]').count(), 3);
  await nodes.getByText(/GPU \d · rtx4090 · research/).waitFor();
  await demo.getByTestId('my-jobs').getByText('busy').waitFor();
  await demo.getByTestId('labs').getByText('demo-lab').waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'dashboard-researcher-1440.png'), fullPage: true });
  await demo.setViewportSize({ width: 375, height: 800 });
  await demo.screenshot({ path: join(SCREENSHOTS, 'dashboard-researcher-375.png'), fullPage: true });
  await demo.setViewportSize({ width: 1440, height: 900 });
});

test('lab usage: my lab\'s share, its place, and 30 days as a chart', async () => {
  await demo.goto(server.base + '/usage');
  const share = demo.getByTestId('share');
  await share.getByText(/^Your lab \(demo-lab\) used \d+ % of all labs' recent GPU time; /).waitFor();
  const chart = demo.getByTestId('usage-chart');
  await chart.waitFor();
  assert.ok(await chart.locator('rect').count() >= 1, 'today has bars (jobs ran)');
  assert.match(await chart.getAttribute('aria-label'), /Daily usage of demo-lab, 30 days/);
  // axes with values and day ticks; a day's values on keyboard focus; the
  // numbers as a table, GPU-hours beside TFLOP·s
  assert.ok(await chart.locator('text.tick').count() >= 10, 'value and day ticks');
  await chart.getByText('TFLOP·s per day').waitFor();
  const today = chart.locator('g.day').last();
  await today.focus();
  assert.match(await today.getAttribute('aria-label'), /^[A-Z][a-z]{2} \d+: [\d.]+k? TFLOP·s, [\d.]+ GPU-hours$/);
  assert.equal(await today.locator('text.value').evaluate((e) => getComputedStyle(e).visibility), 'visible');
  await demo.getByText('The numbers, day by day').click();
  await demo.getByTestId('usage-table').getByRole('columnheader', { name: 'GPU-hours' }).waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'usage-1440.png'), fullPage: true });
  await demo.setViewportSize({ width: 375, height: 800 });
  await demo.screenshot({ path: join(SCREENSHOTS, 'usage-375.png'), fullPage: true });
  await demo.setViewportSize({ width: 1440, height: 900 });
});

test('account: a token is shown once, works, and stops working when revoked; the password changes', async () => {
  await demo.goto(server.base + '/account');
  await demo.getByLabel('Name (what it is for)').fill('laptop');
  await demo.getByRole('button', { name: 'Create token' }).click();
  const token = (await demo.getByTestId('new-token').textContent()).trim();
  const me = async () => (await demo.request.fetch(server.base + '/v1/me', { headers: { authorization: `Bearer ${token}` } })).status();
  assert.equal(await me(), 200);
  await demo.getByTestId('tokens').getByText('laptop').waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'account-1440.png'), fullPage: true });
  await demo.getByTestId('tokens').getByRole('button', { name: 'Revoke' }).first().click();
  await until('revoked', async () => (await me()) === 401);

  await demo.getByLabel('Current password').fill('not-it-at-all');
  await demo.getByLabel('New password (10 characters or more)').fill('a-brand-new-password');
  await demo.getByRole('button', { name: 'Change password' }).click();
  await demo.getByText('the current password is wrong').waitFor();
  await demo.getByLabel('Current password').fill(DEMO_PASSWORD);
  await demo.getByRole('button', { name: 'Change password' }).click();
  await demo.getByTestId('password-changed').waitFor();
  const fresh = await (await browser.newContext()).newPage();
  await signIn(fresh, server.base, 'demo', 'a-brand-new-password');
});
