// A long log opens at its end (where the job is now) and pages back on
// request; a job with many files lists a page of them and says how many
// more there are.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSignedIn, api, until } from '../harness.mjs';

let server, browser, demo;
before(async () => {
  ({ server, browser, demo } = await startSignedIn());
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a long log opens at its end and pages back; many files are listed a page at a time', async () => {
  const page = demo;
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // ~1.3 MB of numbered lines, and 150 files
  const script = 'seq -f "line %06g" 1 120000\ncd "$JOB_OUTPUT_DIR" && for i in $(seq 150); do : > "f$i"; done\necho the-last-line';
  const job = await api(page, server.base, 'POST', '/v1/jobs', { name: 'long-log', command: script, num_gpus: 1 });
  assert.equal(job.status, 201);
  const id = job.body.id;
  await until('the job ends', async () => (await api(page, server.base, 'GET', `/v1/jobs/${id}`)).body.state === 'COMPLETED');
  await page.goto(`${server.base}/jobs/${id}`);
  const log = page.getByTestId('log');
  await log.getByText('the-last-line').waitFor();
  const shown = await log.textContent();
  assert.ok(!shown.includes('line 000001\n'), 'the start of a long log is not what opens');
  assert.ok(shown.length <= 64 * 1024, `${shown.length} characters shown`);
  const firstShown = Number(/line (\d+)/.exec(shown)[1]);
  await page.getByTestId('log-earlier').click();
  await until('earlier output', async () => (await log.textContent()).includes(`line ${String(firstShown - 1).padStart(6, '0')}\n`));
  const after = await log.textContent();
  assert.ok(after.endsWith('the-last-line\n[jpu-share] attempt 1 exited with code 0\n') && after.length > shown.length, 'earlier output comes before, the end stays');
  // a page of files, and how many more
  assert.equal(await page.getByTestId('files').locator('li').count(), 100);
  assert.match(await page.getByTestId('more-files').textContent(), /and 51 more files/);
  assert.deepEqual(errors, []);
});
