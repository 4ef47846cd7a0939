// Day-one features in the console, in real Chromium against the real
// server (local executor): a job that runs after another (its chain with
// links), an array shown as one row with counts and one Cancel, the
// monthly usage report with its CSV download, and notifications to a
// real webhook receiver with their signature checked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { createHmac } from 'node:crypto';
import { startSignedIn, api, until, SCREENSHOTS } from '../harness.mjs';

let server, browser, demo;
before(async () => {
  ({ server, browser, demo } = await startSignedIn());
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const stateOf = async (id) => (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.state;

test('a job submitted to run after another shows its chain and runs once it may', async () => {
  const { body: first } = await api(demo, server.base, 'POST', '/v1/jobs', { name: 'prepare', command: 'sleep 3', num_gpus: 1 });
  await demo.goto(server.base + '/submit');
  await demo.getByLabel('Name').fill('evaluate');
  await demo.getByLabel('Script (run with bash)').fill('echo evaluated');
  await demo.getByLabel(/^Run after/).fill(`ok:${first.id}`);
  await demo.getByRole('button', { name: 'Submit' }).click();
  await demo.waitForURL(/\/jobs\/\d+$/);
  const chain = demo.getByTestId('dependencies');
  await chain.getByRole('link', { name: `#${first.id}` }).waitFor();
  await demo.getByText('waiting for the jobs it depends on to end').waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'job-dependency-1440.png'), fullPage: true });
  await until('COMPLETED', async () => (await demo.getByTestId('state').textContent()).trim() === 'COMPLETED');
  assert.equal(await stateOf(first.id), 'COMPLETED');
  // a bad list is refused on the form, under its field
  await demo.goto(server.base + '/submit');
  await demo.getByLabel('Name').fill('bad');
  await demo.getByLabel('Script (run with bash)').fill('true');
  await demo.getByLabel(/^Run after/).fill('soon:1');
  await demo.getByRole('button', { name: 'Submit' }).click();
  await demo.getByText(/is not one of ok, any, notok/).waitFor();
});

test('an array is one row with counts by state and one Cancel', async () => {
  await demo.goto(server.base + '/submit');
  await demo.getByLabel('Name').fill('sweep');
  await demo.getByLabel('Script (run with bash)').fill('sleep 120');
  await demo.getByLabel(/^Array/).fill('0-3%1');
  await demo.getByRole('button', { name: 'Submit' }).click();
  await demo.waitForURL(/\/jobs\?array=\d+$/);
  const array = Number(new URL(demo.url()).searchParams.get('array'));
  await demo.getByTestId('array-summary').getByText(/^4 elements \(0-3%1, at most 1 at once\)/).waitFor();
  assert.equal(await demo.getByTestId('jobs').locator('tbody tr').count(), 4, 'the array page lists each element');
  await until('one element running', async () => {
    const { body } = await api(demo, server.base, 'GET', `/v1/jobs?array=${array}`);
    return body.jobs.filter((j) => j.state === 'RUNNING').length === 1;
  });

  await demo.goto(server.base + '/jobs');
  const row = demo.locator(`tr[data-array="${array}"]`);
  await row.getByText(`Array #${array} sweep (4 elements)`).waitFor();
  assert.match(await row.getByTestId('array-counts').textContent(), /3 USER_QUEUE_WAIT · 1 RUNNING/);
  assert.equal(await demo.locator(`tr[data-job]`).filter({ hasText: 'sweep' }).count(), 0, 'no element rows of their own');
  await demo.screenshot({ path: join(SCREENSHOTS, 'jobs-array-1440.png'), fullPage: true });
  await row.getByRole('button', { name: 'Cancel array…' }).click();
  await row.getByRole('button', { name: 'Yes, cancel them' }).click();
  await row.getByTestId('array-cancelled').waitFor();
  await until('every element ended', async () => {
    const { body } = await api(demo, server.base, 'GET', `/v1/jobs?array=${array}`);
    return body.jobs.every((j) => j.state === 'CANCELLED');
  });
});

test('the monthly usage report, and the same as a CSV file', async () => {
  const month = new Date().toISOString().slice(0, 7);
  await demo.goto(`${server.base}/usage?month=${month}&by=user`);
  const report = demo.getByTestId('report');
  await report.getByRole('cell', { name: 'demo', exact: true }).waitFor();
  assert.equal(await demo.getByLabel('Month', { exact: true }).inputValue(), month);
  const href = await demo.getByTestId('report-csv').getAttribute('href');
  assert.match(href, new RegExp(`from=${month}-01&to=${month}-\\d\\d&by=user&format=csv`));
  const csv = await demo.request.fetch(server.base + href);
  assert.equal(csv.status(), 200);
  assert.match(csv.headers()['content-type'], /^text\/csv/);
  const lines = (await csv.text()).trim().split('\n');
  assert.equal(lines[0], 'user,jobs,gpu_hours,tflop_s');
  assert.ok(lines.some((l) => l.startsWith('demo,')), lines.join('\n'));
  await demo.screenshot({ path: join(SCREENSHOTS, 'usage-report-1440.png'), fullPage: true });
});

test('notifications: a webhook set on the account page gets signed events, listed as delivered', async () => {
  const received = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${receiver.address().port}/hook`;
  try {
    await demo.goto(server.base + '/account');
    await demo.getByLabel(/^Webhook URL/).fill(url);
    await demo.getByLabel('a job starts').uncheck();
    await demo.getByRole('button', { name: 'Save notifications' }).click();
    const secret = (await demo.getByTestId('webhook-secret').textContent()).trim();
    assert.match(secret, /^[0-9a-f]{64}$/);
    const { body: job } = await api(demo, server.base, 'POST', '/v1/jobs', { name: 'told', command: 'true', num_gpus: 1 });
    await until('the webhook', async () => received.length >= 1);
    const hook = received[0];
    const payload = JSON.parse(hook.body);
    assert.equal(payload.event, 'ended', 'only the events ticked');
    assert.equal(payload.job.id, job.id);
    assert.equal(hook.headers['x-jpu-signature'], 'sha256=' + createHmac('sha256', secret).update(hook.body).digest('hex'));
    await demo.reload();
    await demo.getByTestId('deliveries').getByText('DELIVERED').waitFor();
    assert.equal(await demo.getByTestId('webhook-secret').count(), 0, 'the secret is not shown again');
    assert.equal(await demo.getByLabel('a job starts').isChecked(), false);
    await demo.screenshot({ path: join(SCREENSHOTS, 'account-notifications-1440.png'), fullPage: true });
  } finally {
    receiver.close();
  }
});
