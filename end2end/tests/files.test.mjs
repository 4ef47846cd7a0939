// #43 in real Chromium against the real server: a file uploaded through
// the Files page (the file picker, then dropped on the zone, each with its
// progress bar) is in the home; a job finds it in $HOME; a notebook opens
// in the home and lists it; a delete asks first. At 375 px the page has no
// sideways scroll.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, signIn, api, until, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

const JUPYTER = process.env.JPU_JUPYTER_LAB ?? '/opt/jpu-share/jupyterlab/bin/jupyter-lab';

let server;
let browser;
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('upload through the Files page, find it in a job\'s $HOME and in a notebook', async () => {
  assert.ok(existsSync(JUPYTER), `${JUPYTER} is missing: run .ci/install-tools`);
  server = await startServer({ JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND: JUPYTER });
  browser = await startBrowser();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const demo = await context.newPage();
  await signIn(demo, server.base, 'demo', DEMO_PASSWORD);

  await demo.goto(server.base + '/files', { waitUntil: 'networkidle' });
  const files = demo.getByTestId('files');
  // the picker: the page reloads its folder when the upload is through
  await Promise.all([
    demo.waitForEvent('load'),
    demo.locator('#upload-input').setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('written in the browser\n') }),
  ]);
  await files.getByRole('link', { name: 'hello.txt' }).waitFor();
  // dropped on the zone
  const drop = await demo.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['dropped bytes'], 'dropped.csv', { type: 'text/csv' }));
    return dt;
  });
  await Promise.all([
    demo.waitForEvent('load'),
    demo.locator('[data-upload]').dispatchEvent('drop', { dataTransfer: drop }),
  ]);
  await files.getByRole('link', { name: 'dropped.csv' }).waitFor();
  await demo.screenshot({ path: join(SCREENSHOTS, 'files-1440.png'), fullPage: true });

  // a job finds it in its home
  const job = await api(demo, server.base, 'POST', '/v1/jobs', { name: 'reads-home', command: 'cat "$HOME/hello.txt"', num_gpus: 1 });
  assert.equal(job.status, 201, JSON.stringify(job.body));
  await until('the job ends', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${job.body.id}`)).body.state === 'COMPLETED');
  const log = await demo.request.get(`${server.base}/v1/jobs/${job.body.id}/logs`);
  assert.match(await log.text(), /written in the browser/);

  // a notebook opens in the home and lists it
  const started = await api(demo, server.base, 'POST', '/v1/sessions', { app: 'jupyterlab', num_gpus: 1 });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const id = started.body.id;
  let url;
  await until('the notebook is ready', async () => {
    const s = (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.session;
    url = s?.state === 'READY' ? s.url : undefined;
    return Boolean(url);
  }).catch(async () => {
    // JupyterLab takes its time on a loaded machine
    await until('the notebook is ready (again)', async () => {
      const s = (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.session;
      url = s?.state === 'READY' ? s.url : undefined;
      return Boolean(url);
    });
  });
  const lab = await context.newPage();
  await lab.goto(new URL(url, server.base).href);
  await lab.locator('.jp-DirListing-item', { hasText: 'hello.txt' }).first().waitFor({ timeout: 90_000 });
  await lab.screenshot({ path: join(SCREENSHOTS, 'files-in-notebook-1440.png') });
  await api(demo, server.base, 'POST', `/v1/jobs/${id}/cancel`);

  // a delete asks first; dismissed, nothing goes; accepted, it goes
  await demo.goto(server.base + '/files', { waitUntil: 'networkidle' });
  const row = files.locator('tr', { hasText: 'dropped.csv' });
  demo.once('dialog', (d) => d.dismiss());
  await row.getByRole('button').click();
  assert.equal((await demo.request.get(`${server.base}/v1/files/home/dropped.csv`)).status(), 200);
  demo.once('dialog', (d) => { assert.match(d.message(), /dropped\.csv/); d.accept(); });
  await Promise.all([demo.waitForEvent('load'), row.getByRole('button').click()]);
  assert.equal((await demo.request.get(`${server.base}/v1/files/home/dropped.csv`)).status(), 404);

  // a data request through the Datasets page's form
  await demo.goto(server.base + '/datasets', { waitUntil: 'networkidle' });
  const ask = demo.getByTestId('data-request');
  await ask.locator('#req-name').fill('imagenet-mini');
  await ask.locator('#req-url').fill('https://data.example.org/imagenet-mini.tar.gz');
  await ask.locator('#req-reason').fill('replicating a paper');
  await Promise.all([demo.waitForEvent('load'), ask.getByRole('button').click()]);
  await demo.getByTestId('requests').getByText('imagenet-mini').waitFor();
  // a refusal says why, in place
  await ask.locator('#req-name').fill('second');
  await ask.locator('#req-url').fill('ftp://data.example.org/x');
  await ask.locator('#req-reason').fill('r');
  await ask.evaluate((f) => f.querySelector('#req-url').setAttribute('type', 'text'));
  await ask.getByRole('button').click();
  await ask.locator('.form-status.error').waitFor();
  assert.match(await ask.locator('.form-status').textContent(), /http/);

  // a phone
  await demo.setViewportSize({ width: 375, height: 800 });
  await demo.goto(server.base + '/files', { waitUntil: 'networkidle' });
  const wide = await demo.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 0, `the Files page scrolls sideways at 375 px by ${wide}px`);
  await demo.screenshot({ path: join(SCREENSHOTS, 'files-375.png'), fullPage: true });
});
