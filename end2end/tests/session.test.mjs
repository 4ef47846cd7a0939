// A notebook from the console, in real Chromium against the real server
// and a real JupyterLab (PyPI, installed by .ci/install-tools): "Start a
// notebook" on the submit page, the session's page until it is ready,
// "Open JupyterLab" in a new tab through /s/{id}/, a Python kernel that
// runs a cell, no Content-Security-Policy violation on the way, and the
// page cannot reach the console's API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, signIn, api, until, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

const JUPYTER = process.env.JPU_JUPYTER_LAB ?? '/opt/jpu-share/jupyterlab/bin/jupyter-lab';

let server, browser, context, demo;
before(async () => {
  assert.ok(existsSync(JUPYTER), `${JUPYTER} is missing: run .ci/install-tools`);
  server = await startServer({ JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND: JUPYTER });
  browser = await startBrowser();
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  demo = await context.newPage();
  await signIn(demo, server.base, 'demo', DEMO_PASSWORD);
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('start a notebook from the console, open JupyterLab and run a cell', async () => {
  const violations = [];
  context.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text()); if (process.env.E2E_DEBUG) console.error('CONSOLE', m.text()); });

  await demo.goto(server.base + '/submit', { waitUntil: 'networkidle' });
  const form = demo.getByTestId('start-notebook');
  await form.getByLabel('Notebook GPUs').fill('1');
  await form.getByLabel('Notebook time limit (minutes, empty = default)').fill('60');
  await form.getByRole('button', { name: 'Start a notebook' }).click();
  await demo.waitForURL(/\/jobs\/\d+$/);
  const id = Number(new URL(demo.url()).pathname.split('/').pop());

  const open = demo.getByTestId('open-session');
  await open.waitFor({ timeout: 60_000 });
  assert.match(await demo.getByTestId('session-time-left').textContent(), /Time left: 5\d minutes/);
  await demo.screenshot({ path: join(SCREENSHOTS, 'session-ready-1440.png'), fullPage: true });

  const [lab] = await Promise.all([context.waitForEvent('page'), open.click()]);
  await lab.waitForURL(new RegExp(`/s/${id}/lab`));
  // the launcher's notebook card, then a cell run by the kernel over the proxy's WebSocket
  await lab.locator('.jp-LauncherCard[data-category="Notebook"]').first().click({ timeout: 60_000 });
  const cell = lab.locator('.jp-Notebook .jp-Cell .cm-content').first();
  await cell.waitFor({ timeout: 60_000 });
  // a cell run before the kernel's socket is up can be lost (seen once on
  // a loaded 2-core run: the cell ran, no output, kernel idle): wait for
  // the kernel, and run the cell again if no output came
  await lab.getByText(/ipykernel\) \| Idle/).first().waitFor({ timeout: 60_000 });
  await cell.click();
  await lab.keyboard.type('import os; print("answer", 6 * 7, "uid", os.getuid())');
  await lab.keyboard.press('Shift+Enter');
  const output = lab.locator('.jp-OutputArea-output', { hasText: 'answer 42' });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await output.first().waitFor({ timeout: 20_000 });
        break;
      } catch (e) {
        if (attempt === 3) throw e;
        await cell.click();
        await lab.keyboard.press('Shift+Enter');
      }
    }
  } finally {
    await lab.screenshot({ path: join(SCREENSHOTS, 'session-jupyterlab-1440.png') });
  }

  assert.deepEqual(violations, []);
  // the session's page is the researcher's code: it cannot call the console's API
  const probe = await lab.evaluate(async () => {
    try { return String((await fetch('/v1/me')).status); } catch { return 'blocked'; }
  });
  assert.equal(probe, 'blocked', 'a session page reached /v1');
  const cancelled = await api(demo, server.base, 'POST', `/v1/jobs/${id}/cancel`);
  assert.ok([200, 202].includes(cancelled.status), `cancel: ${cancelled.status}`);
  await until('the session ends', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.session.state === 'ENDED');
});
