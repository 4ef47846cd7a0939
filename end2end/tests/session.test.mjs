// A notebook from the console, in real Chromium against the real server
// and a real JupyterLab (PyPI, installed by .ci/install-tools), on both
// executors: "Start a notebook" on the submit page, the session's page
// until it is ready, "Open JupyterLab" in a new tab through /s/{id}/, a
// Python kernel that runs a cell, no Content-Security-Policy violation on
// the way, and the page cannot reach the console's API. Chromium sends
// its own Accept-Encoding, so the proxy's answers come compressed (on
// Slurm, where the app's token is scrubbed from every body, they once
// came back empty: #41).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, signIn, api, until, ADMIN_PASSWORD, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

const JUPYTER = process.env.JPU_JUPYTER_LAB ?? '/opt/jpu-share/jupyterlab/bin/jupyter-lab';
// the host account .ci/slurm-cluster makes for demo's jobs
const SLURM_DEMO_UID = 3901;

const servers = [];
let browser;
after(async () => {
  await browser?.close();
  for (const server of servers) await server.stop();
});

/// A server on `executor`, and demo signed in on a page of its own context.
async function setUp(extraEnv) {
  assert.ok(existsSync(JUPYTER), `${JUPYTER} is missing: run .ci/install-tools`);
  const server = await startServer({ JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND: JUPYTER, ...extraEnv });
  servers.push(server);
  browser ??= await startBrowser();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const demo = await context.newPage();
  await signIn(demo, server.base, 'demo', DEMO_PASSWORD);
  return { server, context, demo };
}

/// Starts a notebook from the submit page, opens it, runs a cell; returns
/// what the cell printed. `name` tells the screenshots apart.
async function notebookWalk({ server, context, demo }, name, attack) {
  const violations = [];
  context.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text()); if (process.env.E2E_DEBUG) console.error('CONSOLE', m.text()); });
  const encodings = [];
  context.on('response', (r) => { if (r.url().includes('/s/')) encodings.push(r.headers()['content-encoding'] ?? 'none'); });

  await demo.goto(server.base + '/submit', { waitUntil: 'networkidle' });
  const form = demo.getByTestId('start-notebook');
  await form.getByLabel('Notebook GPUs').fill('1');
  await form.getByLabel('Notebook time limit (minutes, empty = default)').fill('60');
  await form.getByRole('button', { name: 'Start a notebook' }).click();
  await demo.waitForURL(/\/jobs\/\d+$/);
  const id = Number(new URL(demo.url()).pathname.split('/').pop());

  const open = demo.getByTestId('open-session');
  await open.waitFor({ timeout: 90_000 });
  assert.match(await demo.getByTestId('session-time-left').textContent(), /Time left: 5\d minutes/);
  await demo.screenshot({ path: join(SCREENSHOTS, `session-ready-${name}-1440.png`), fullPage: true });

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
    await lab.screenshot({ path: join(SCREENSHOTS, `session-jupyterlab-${name}-1440.png`) });
  }
  const printed = await output.first().textContent();

  assert.deepEqual(violations, []);
  // the browser asked for compression and got it for the app's pages
  assert.ok(encodings.some((e) => e === 'br' || e === 'gzip'), `nothing under /s/ came compressed: ${encodings}`);
  // the session's page is the researcher's code: it cannot call the console's API
  const probe = await lab.evaluate(async () => {
    try { return String((await fetch('/v1/me')).status); } catch { return 'blocked'; }
  });
  assert.equal(probe, 'blocked', 'a session page reached /v1');
  // (its windows' own policies report what they block: after the check above)
  if (attack) await attack(lab, id);
  const cancelled = await api(demo, server.base, 'POST', `/v1/jobs/${id}/cancel`);
  assert.ok([200, 202].includes(cancelled.status), `cancel: ${cancelled.status}`);
  await until('the session ends', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.session.state === 'ENDED');
  return printed;
}

test('start a notebook from the console, open JupyterLab and run a cell (local processes)', async () => {
  const printed = await notebookWalk(await setUp({}), 'local', attackFromACell);
  assert.match(printed, /answer 42 uid \d+/);
});

/// S1: a cell's output runs script in the session's page. It opens
/// same-origin windows under /s/ — its own session (the control: popups
/// open and their DOM is reachable), another id (the proxy's own 404),
/// paths the proxy does not route — and from each tries /v1 as the
/// notebook's owner. It must get nothing from any of them, and no
/// service worker of its own (whose pages the proxy would never see).
async function attackFromACell(lab, id) {
  const js = `(async()=>{const out=[];for(const p of ['/s/${id}/lab','/s/99999/','/s/','/s/abc/x']){`
    + `const w=window.open(p);await new Promise(r=>setTimeout(r,3000));let dom,api;`
    + `try{dom=String(w.document.readyState)}catch(e){dom='no-dom'}`
    + `try{api='REACHED '+(await w.fetch('/v1/me')).status}catch(e){api='blocked'}`
    + `out.push(p+' '+dom+' '+api);try{w.close()}catch(e){}}`
    + `try{await navigator.serviceWorker.register('/s/${id}/files/sw.js',{scope:'/s/${id}/files/'})}catch(e){}`
    + `await new Promise(r=>setTimeout(r,3000));`
    + `const left=(await navigator.serviceWorker.getRegistrations()).length;`
    + `out.push('service workers left '+left);window.__attack=out})()`;
  await lab.locator('.jp-Notebook .jp-Cell .cm-content').last().click();
  // the worker's script is the notebook's own file, served by Jupyter
  const sw = "open('sw.js', 'w').write('self.onfetch = e => 0')";
  await lab.keyboard.type(`${sw}; from IPython.display import Javascript, display; display(Javascript("${js}"))`);
  await lab.keyboard.press('Shift+Enter');
  await lab.waitForFunction(() => Array.isArray(window.__attack), null, { timeout: 60_000 });
  const results = await lab.evaluate(() => window.__attack);
  if (process.env.E2E_DEBUG) console.error('ATTACK', results);
  assert.equal(results.length, 5, `${results}`);
  // whatever it registers is the proxy's worker, which removes itself
  assert.equal(results.pop(), 'service workers left 0');
  assert.match(results[0], /^\/s\/\d+\/lab (loading|interactive|complete) blocked$/, `the control: ${results[0]}`);
  for (const line of results.slice(1)) {
    assert.match(line, / blocked$/, `a window the cell opened reached /v1: ${line}`);
    assert.doesNotMatch(line, / (loading|interactive|complete) /, `a window the cell opened was scriptable: ${line}`);
  }
}

// `make test` runs the browser tests with the CI Slurm cluster up
// (.ci/with-slurm sets SLURM_CONF and JPU_TEST_SLURM=1)
const slurm = Boolean(process.env.SLURM_CONF);
if (!slurm && process.env.JPU_TEST_SLURM === '1') throw new Error('JPU_TEST_SLURM is set but SLURM_CONF is not');

test('a notebook on Slurm opens in the browser and runs a cell as the user\'s Slurm uid', { skip: !slurm && 'no SLURM_CONF (make test starts the cluster)' }, async () => {
  const setup = await setUp({ JPU__EXECUTOR__KIND: 'slurm' });
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, setup.server.base, 'admin', ADMIN_PASSWORD);
  const uid = await api(admin, setup.server.base, 'PATCH', '/v1/admin/users/demo', { unix_uid: SLURM_DEMO_UID });
  assert.equal(uid.status, 200, JSON.stringify(uid.body));
  // only Slurm's nodes: the embedded default's demo nodes are not seeded
  let names = [];
  await until('Slurm\'s nodes discovered', async () => {
    names = (await api(admin, setup.server.base, 'GET', '/v1/admin/nodes')).body.map((n) => n.name);
    return names.length >= 3;
  });
  assert.ok(names.every((n) => n.startsWith('s')), `nodes: ${names}`);
  try {
    const printed = await notebookWalk(setup, 'slurm');
    assert.match(printed, new RegExp(`answer 42 uid ${SLURM_DEMO_UID}`));
  } finally {
    // a failure must not leave the notebook holding the shared cluster's GPUs
    try { execFileSync('scancel', [`--user=${SLURM_DEMO_UID}`]); } catch {}
  }
});
