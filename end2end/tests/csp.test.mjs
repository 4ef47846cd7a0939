// Every console page works under its Content-Security-Policy: the islands
// hydrate (their inline scripts carry the response's nonce, the wasm
// compiles under 'wasm-unsafe-eval') and Chromium reports no violation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, signIn, api, ADMIN_PASSWORD } from '../harness.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('no page of the console breaks its Content-Security-Policy', async () => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  // violations are also events in the page: count them there
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await signIn(page, server.base, 'admin', ADMIN_PASSWORD);
  const job = await api(page, server.base, 'POST', '/v1/jobs', { name: 'csp', command: 'echo hi', num_gpus: 1 });
  assert.equal(job.status, 201);
  for (const path of ['/', '/queue', '/jobs', `/jobs/${job.body.id}`, '/submit', '/usage', '/account', '/admin', '/admin/cluster', '/admin/people', '/admin/backfill']) {
    const resp = await page.goto(server.base + path);
    assert.match(resp.headers()['content-security-policy'] ?? '', /'nonce-/, path);
    await page.waitForLoadState('networkidle');
    const violations = await page.evaluate(() => window.__cspViolations);
    assert.deepEqual(violations, [], `${path}: ${violations}`);
  }
  assert.deepEqual(problems, []);
  // a page cannot be framed (clickjacking): Chromium shows its error page
  // in the frame instead of the console
  const framing = await browser.newPage();
  await framing.setContent(`<iframe src="${server.base}/login"></iframe>`);
  await framing.waitForLoadState('networkidle');
  const frame = framing.frames()[1];
  const shown = frame ? await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '') : '';
  assert.ok(!/Sign in/.test(shown), `the console rendered inside a frame (${frame?.url()})`);
  assert.notEqual(frame?.url(), server.base + '/login');
});
