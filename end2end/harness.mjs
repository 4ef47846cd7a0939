// Starts a real jpu-share server (the built binary) on a free port over a
// temp SQLite file, and a real Chromium (Debian's) through playwright-core.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN_PASSWORD = 'e2e-admin-password';
export const DEMO_PASSWORD = 'e2e-demo-password';
export const SCREENSHOTS = join(root, 'end2end', 'screenshots');

/// A temp dir jobs can reach by path: each job gets private /tmp,
/// /var/tmp, /dev/shm and /run/lock, so as root it lives elsewhere.
export function sharedTmp(prefix) {
  if (process.getuid?.() === 0) {
    const base = '/var/lib/jpu-share-tests';
    mkdirSync(base, { recursive: true, mode: 0o755 });
    return mkdtempSync(join(base, prefix));
  }
  return mkdtempSync(join(tmpdir(), prefix));
}

/// `extraEnv`: more settings for this server (e.g. `JPU__EXECUTOR__APPTAINER`).
export async function startServer(extraEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'jpu-e2e-'));
  // jobs run as their own uid (nobody here) and must reach their output dir
  chmodSync(dir, 0o755);
  const bin = process.env.JPU_SHARE_BIN ?? join(root, 'target', 'debug', 'jpu-share');
  const child = spawn(bin, ['serve'], {
    cwd: dir,
    env: {
      ...process.env,
      JPU_ADMIN_PASSWORD: ADMIN_PASSWORD,
      JPU_DEMO_PASSWORD: DEMO_PASSWORD,
      JPU__SERVER__BIND: '127.0.0.1:0',
      JPU__SERVER__SITE_ROOT: join(root, 'target', 'site'),
      JPU__DATABASE__URL: `sqlite://${join(dir, 'jpu.db')}`,
      JPU__STORAGE__ROOT: join(dir, 'storage'),
      JPU__CANCEL__GRACE_SECONDS: '2',
      JPU__SCHEDULER__CYCLE_MS: '1000',
      // the tests' webhook receiver listens on loopback, which a default
      // server refuses as a target
      JPU__NOTIFY__WEBHOOK_ALLOW: '["127.0.0.1"]',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // wait for the line the server prints once it listens (no sleeps)
  const base = await new Promise((ok, fail) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const m = seen.match(/listening on (http:\/\/[\d.:]+)/);
      if (m) ok(m[1]);
    });
    child.on('exit', (code) => fail(new Error(`server exited early (${code}): ${seen}`)));
  });
  return {
    base,
    async stop() {
      const exited = new Promise((ok) => child.on('exit', ok));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startBrowser() {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/// A server, a browser, and two signed-in pages in separate contexts:
/// `demo` (researcher) and `admin`, at 1440 px.
export async function startSignedIn(extraEnv = {}) {
  const server = await startServer(extraEnv);
  const browser = await startBrowser();
  const demo = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await signIn(demo, server.base, 'demo', DEMO_PASSWORD);
  const admin = await (await browser.newContext()).newPage({ viewport: { width: 1440, height: 900 } });
  await signIn(admin, server.base, 'admin', ADMIN_PASSWORD);
  return { server, browser, demo, admin };
}

export async function signIn(page, base, username, password) {
  await page.goto(`${base}/login`);
  // by the fields' ids: the page may be in Korean
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.locator('form[action="/login"] button[type=submit]').click();
  await page.waitForURL(`${base}/`);
}

/// Calls /v1 with the page's session cookie; returns the parsed body.
export async function api(page, base, method, path, body) {
  // as the console's own pages would send it (cookie-authenticated
  // changes must name the console's origin)
  const resp = await page.request.fetch(base + path, { method, data: body, headers: { origin: base } });
  const text = await resp.text();
  return { status: resp.status(), body: text ? JSON.parse(text) : null };
}

/// Polls `check` (an async predicate) until it holds, 30 s at most.
export async function until(what, check) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
