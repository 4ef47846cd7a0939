// The submit form with a workspace and a script loaded from a file, in
// real Chromium against the real server. Apptainer is not packaged for
// Debian, so the server is given a stand-in `apptainer` that takes the
// same command line, writes a dummy image on `build` and runs the job
// without a container on `exec`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, startBrowser, signIn, api, until, sharedTmp, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

const FAKE_APPTAINER = `#!/bin/bash
case "$1" in
  build) shift; while [[ "$1" == --* ]]; do shift; done; echo "fake-apptainer: build $1"; echo SIF > "$1";;
  exec) shift; echo "fake-apptainer: exec $*"
        while [ $# -gt 0 ] && [[ "$1" != *.sif ]]; do shift; done; shift; exec "$@";;
  *) exit 64;;
esac
`;

let server, browser, demo, tools;
before(async () => {
  // outside /tmp: each job gets a /tmp of its own, and runs this there
  tools = sharedTmp('jpu-e2e-tools-');
  chmodSync(tools, 0o755); // jobs run as nobody and must run it
  writeFileSync(join(tools, 'apptainer'), FAKE_APPTAINER, { mode: 0o755 });
  server = await startServer({ JPU__EXECUTOR__APPTAINER: join(tools, 'apptainer') });
  browser = await startBrowser();
  demo = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await signIn(demo, server.base, 'demo', DEMO_PASSWORD);
});
after(async () => {
  await browser?.close();
  await server?.stop();
  if (tools) rmSync(tools, { recursive: true, force: true });
});

test('submit in a READY workspace with the script loaded from a file', async () => {
  const created = await api(demo, server.base, 'POST', '/v1/workspaces', { name: 'np', base_image: 'python:3.11-slim', packages: ['numpy'] });
  assert.equal(created.status, 201);
  await until('workspace READY', async () => (await api(demo, server.base, 'GET', '/v1/workspaces/np')).body.status === 'READY');

  await demo.goto(server.base + '/submit', { waitUntil: 'networkidle' });
  await demo.getByLabel('Name').fill('from-file');
  await demo.getByLabel('…or load it from a file').setInputFiles({
    name: 'train.sh', mimeType: 'text/x-sh', buffer: Buffer.from('echo "loaded-from-file LR=$LR"\n'),
  });
  await until('script loaded', async () => (await demo.getByLabel('Script (run with bash)').inputValue()).includes('loaded-from-file'));
  await demo.getByLabel('Workspace (container image)', { exact: true }).selectOption('np');
  await demo.getByLabel('Environment (KEY=value per line)').fill('LR=0.1');
  await demo.screenshot({ path: join(SCREENSHOTS, 'submit-workspace-1440.png'), fullPage: true });
  await demo.getByRole('button', { name: 'Submit' }).click();
  await demo.waitForURL(/\/jobs\/\d+$/);
  const id = Number(new URL(demo.url()).pathname.split('/').pop());
  await until('COMPLETED', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${id}`)).body.state === 'COMPLETED');
  const log = (await api(demo, server.base, 'GET', `/v1/jobs/${id}/logs`)).body.data;
  assert.match(log, /fake-apptainer: exec --containall --nv --net --network none/);
  assert.match(log, /loaded-from-file LR=0\.1/);
});
