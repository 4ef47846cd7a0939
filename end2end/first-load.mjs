// Measures what a signed-in researcher's browser transfers on a first load
// (empty cache) of a console page, in English and in Korean: every response's bytes on the wire, as
// Chromium's network layer counts them (compressed, headers included),
// until the page's islands are hydrated and the network is idle. A page
// that reports an error or warning (a failed hydration, an island the
// bundle lacks) fails the run.
//
//   node end2end/first-load.mjs [path …]     (default: / /queue /jobs/new-job)
//
// Run it against the release build (`make run` builds both); the dev
// bundle is many times larger. JPU_SHARE_BIN picks the binary.
import { join, resolve } from 'node:path';
import { startServer, startBrowser, signIn, api, DEMO_PASSWORD } from './harness.mjs';

// (the server runs in a temp dir: a relative path is taken from here)
process.env.JPU_SHARE_BIN = resolve(process.env.JPU_SHARE_BIN ?? join(import.meta.dirname, '..', 'target', 'release', 'jpu-share'));
const paths = process.argv.slice(2);
const server = await startServer();
const browser = await startBrowser();
try {
  const signedIn = await browser.newContext();
  const page = await signedIn.newPage();
  await signIn(page, server.base, 'demo', DEMO_PASSWORD);
  const { body: job } = await api(page, server.base, 'POST', '/v1/jobs', { name: 'first-load', command: 'sleep 60', num_gpus: 1 });
  const session = await signedIn.storageState();
  // each page in both of the console's languages (the browser's
  // Accept-Language picks it)
  const pages = (paths.length ? paths : ['/', '/queue', `/jobs/${job.id}`]).flatMap((p) => [[p, 'en-US'], [p, 'ko-KR']]);
  for (const [path, locale] of pages) {
    // a fresh context: the session cookie, but nothing cached
    const context = await browser.newContext({ storageState: session, locale });
    const tab = await context.newPage();
    const cdp = await context.newCDPSession(tab);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const problems = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    // (an island the wasm lacks is only a warning on the console)
    tab.on('console', (m) => ['error', 'warning'].includes(m.type()) && problems.push(m.text()));
    const urls = new Map();
    const sizes = new Map();
    cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, new URL(e.response.url).pathname));
    cdp.on('Network.loadingFinished', (e) => sizes.set(e.requestId, e.encodedDataLength));
    await tab.goto(server.base + path, { waitUntil: 'networkidle' });
    const rows = [...sizes].map(([id, bytes]) => [urls.get(id) ?? id, bytes]);
    const total = rows.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(`${path} (${locale}): ${(total / 1024).toFixed(1)} KiB transferred`);
    for (const [url, bytes] of rows) console.log(`  ${(bytes / 1024).toFixed(1).padStart(7)} KiB  ${url}`);
    // a number for a page whose islands did not hydrate would mean nothing
    if (problems.length) throw new Error(`${path} (${locale}) did not load cleanly: ${problems.join('; ')}`);
    await context.close();
  }
  await api(page, server.base, 'POST', `/v1/jobs/${job.id}/cancel`);
} finally {
  await browser.close();
  await server.stop();
}
