// Every page for everyone, in real Chromium: axe-core finds no serious or
// critical violation on any page, signed in as a researcher and as an
// admin; at 375 px no page scrolls sideways (tables scroll inside their
// own box, the queue turns into cards with why each job waits in view);
// times show in the reader's own zone with a relative form, the exact UTC
// time in their title; and a screenshot of every page at 1440 and 375 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, startBrowser, signIn, api, until, ADMIN_PASSWORD, DEMO_PASSWORD, SCREENSHOTS } from '../harness.mjs';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const PAGES = ['/', '/queue', '/jobs', '/submit', '/usage', '/files', '/datasets', '/policy', '/account'];
const ADMIN_PAGES = ['/admin', '/admin/cluster', '/admin/people', '/admin/backfill', '/admin/datasets'];

let server, browser, demo, admin, jobId;
before(async () => {
  server = await startServer();
  browser = await startBrowser();
  // axe is injected as a script: these contexts let it past the CSP (the
  // CSP itself has its own test)
  const context = async (user, password, timezoneId) => {
    const ctx = await browser.newContext({ bypassCSP: true, timezoneId, viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    await signIn(page, server.base, user, password);
    return page;
  };
  demo = await context('demo', DEMO_PASSWORD, 'Asia/Seoul');
  admin = await context('admin', ADMIN_PASSWORD, 'America/New_York');
  // something in every list: a finished job, running ones, and more than
  // the four demo GPUs take, so some wait
  const submit = (page, name, command, gpus = 1) => api(page, server.base, 'POST', '/v1/jobs', { name, command, num_gpus: gpus });
  jobId = (await submit(demo, 'finished', 'echo done')).body.id;
  await until('finished', async () => (await api(demo, server.base, 'GET', `/v1/jobs/${jobId}`)).body.state === 'COMPLETED');
  await submit(demo, 'running', 'sleep 120');
  await submit(demo, 'wide', 'sleep 120', 2);
  await submit(admin, 'ops-a', 'sleep 120');
  await submit(admin, 'ops-b', 'sleep 120');
});
after(async () => {
  const { body } = await api(admin, server.base, 'GET', '/v1/jobs?state=USER_QUEUE_WAIT,GLOBAL_QUEUE_WAIT,RUNNING');
  for (const j of body?.jobs ?? []) await api(admin, server.base, 'POST', `/v1/jobs/${j.id}/cancel`);
  await browser?.close();
  await server?.stop();
});

async function axe(page) {
  await page.addScriptTag({ path: axePath });
  const { passes, violations } = await page.evaluate(async () => {
    const result = await window.axe.run(document);
    const violations = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    return { passes: result.passes.length, violations };
  });
  assert.ok(passes >= 10, `axe checked the page (${passes} rules passed)`);
  return violations;
}

test('the check finds what it should: an unlabelled image and input are violations', async () => {
  await visit(demo, '/');
  await demo.evaluate(() => {
    document.querySelector('main').insertAdjacentHTML('beforeend', '<img src="/favicon.svg"><input type="text">');
  });
  const found = (await axe(demo)).join('\n');
  assert.match(found, /image-alt \(critical\)/);
  assert.match(found, /label \(critical\)/);
});

/// Elements wider than the viewport that are not inside a box of their own
/// that scrolls (a table may be wider than a phone inside `.scroll`).
async function overflowing(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const inScroller = (el) => {
      for (let p = el.parentElement; p; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        if ((o === 'auto' || o === 'scroll') && p.clientWidth <= width) return true;
      }
      return false;
    };
    const out = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${width})`);
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > width + 1 && !inScroller(el)) out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)}`);
    }
    return out.slice(0, 5);
  });
}

async function visit(page, path) {
  await page.goto(server.base + path);
  await page.waitForLoadState('networkidle');
}

const shot = (path) => (path === '/' ? 'home' : path.slice(1).replaceAll('/', '-'));

test('no serious or critical accessibility violation on any page, as a researcher', async () => {
  const found = [];
  for (const path of [...PAGES, `/jobs/${jobId}`]) {
    await visit(demo, path);
    for (const v of await axe(demo)) found.push(`${path}: ${v}`);
  }
  assert.deepEqual(found, []);
});

test('no serious or critical accessibility violation on any page, as an admin', async () => {
  const found = [];
  for (const path of [...PAGES, ...ADMIN_PAGES]) {
    await visit(admin, path);
    for (const v of await axe(admin)) found.push(`${path}: ${v}`);
  }
  const anonymous = await (await browser.newContext({ bypassCSP: true })).newPage();
  for (const path of ['/login', '/policy']) {
    await visit(anonymous, path);
    for (const v of await axe(anonymous)) found.push(`${path} (signed out): ${v}`);
  }
  await anonymous.setViewportSize({ width: 375, height: 800 });
  await visit(anonymous, '/policy');
  for (const v of await axe(anonymous)) found.push(`/policy (signed out, 375 px): ${v}`);
  for (const o of await overflowing(anonymous)) found.push(`/policy (signed out, 375 px): ${o}`);
  assert.deepEqual(found, []);
});

test('at 375 px no page scrolls sideways, and the queue says why each job waits in view', async () => {
  const found = [];
  for (const [page, paths] of [[demo, [...PAGES, `/jobs/${jobId}`]], [admin, ADMIN_PAGES]]) {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const path of paths) {
      await visit(page, path);
      for (const o of await overflowing(page)) found.push(`${path}: ${o}`);
      await page.screenshot({ path: join(SCREENSHOTS, `page-${shot(path).replace(/\d+$/, 'id')}-375.png`), fullPage: true });
    }
  }
  assert.deepEqual(found, []);
  await visit(demo, '/queue');
  const reason = demo.getByTestId('global-queue').locator('td.reason').first();
  await reason.waitFor();
  const box = await reason.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `the reason is in view: ${JSON.stringify(box)}`);
  assert.ok((await reason.textContent()).length > 0);
  for (const page of [demo, admin]) await page.setViewportSize({ width: 1440, height: 900 });
});

test('a waiting job\'s reason links to the Policy page section that explains it', async () => {
  await visit(demo, '/queue');
  const link = demo.getByTestId('global-queue').locator('td.reason a').first();
  await link.waitFor();
  const href = await link.getAttribute('href');
  assert.match(href, /^\/policy#[a-z-]+$/);
  await link.click();
  await demo.waitForURL((url) => url.pathname === '/policy' && url.hash === href.slice('/policy'.length));
  const heading = demo.locator(href.slice('/policy'.length));
  assert.equal(await heading.evaluate((el) => el.tagName), 'H2');
  assert.ok(await heading.isVisible());
});

test('times are in the reader\'s zone with a relative form, the exact UTC time in the title', async () => {
  await visit(demo, `/jobs/${jobId}`);
  const first = demo.locator('time[data-local]').first();
  await until('refined', async () => /today|yesterday| ago|in /.test(await first.textContent()));
  const text = await first.textContent();
  const datetime = await first.getAttribute('datetime');
  // the browser runs in Seoul (UTC+9): its clock, not UTC's
  const [seoul, utc] = await demo.evaluate((at) => ['Asia/Seoul', 'UTC'].map((timeZone) =>
    new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', timeZone }).format(new Date(at))), datetime);
  assert.ok(text.startsWith(seoul) && !text.startsWith(utc), `${text} shows Seoul time ${seoul}, not UTC ${utc}`);
  assert.match(text, / · (now|\d+ min ago|\d+ h( \d+ min)? ago)$/);
  assert.match(await first.getAttribute('title'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? UTC$/);
  assert.doesNotMatch(await demo.locator('main, .content').first().textContent(), /\d\d:\d\d:\d{3}/, 'no more 19:07:042');
  // the job page says each thing once
  const facts = await demo.getByTestId('facts').textContent();
  assert.equal(facts.match(/COMPLETED/g).length, 1, facts);
  assert.match(facts, /attempt 1 of at most \d/);
  assert.match(facts, /demo \(demo-lab\)/);
});

test('in Korean (the browser\'s language), every page at 1440 and 375 px: lang="ko", Korean words, no serious violation, no sideways scroll', async () => {
  const ctx = await browser.newContext({ bypassCSP: true, locale: 'ko-KR', viewport: { width: 1440, height: 900 } });
  const ko = await ctx.newPage();
  const found = [];
  await visit(ko, '/policy');
  assert.equal(await ko.getAttribute('html', 'lang'), 'ko', 'signed out, from Accept-Language');
  assert.match(await ko.locator('h1').textContent(), /GPU 공유 방식/);
  for (const v of await axe(ko)) found.push(`/policy (signed out): ${v}`);
  await visit(ko, '/login');
  assert.equal(await ko.getByLabel('비밀번호').getAttribute('type'), 'password', 'the sign-in form in Korean');
  for (const v of await axe(ko)) found.push(`/login: ${v}`);
  await signIn(ko, server.base, 'demo', DEMO_PASSWORD);
  assert.match(await ko.locator('h1').textContent(), /클러스터/);
  for (const width of [1440, 375]) {
    await ko.setViewportSize({ width, height: width === 375 ? 800 : 900 });
    for (const path of [...PAGES, `/jobs/${jobId}`]) {
      await visit(ko, path);
      if ((await ko.getAttribute('html', 'lang')) !== 'ko') found.push(`${path}: html lang is not ko`);
      for (const v of await axe(ko)) found.push(`${path} (${width} px): ${v}`);
      if (width === 375) for (const o of await overflowing(ko)) found.push(`${path} (375 px): ${o}`);
      await ko.screenshot({ path: join(SCREENSHOTS, `page-${shot(path).replace(/\d+$/, 'id')}-ko-${width}.png`), fullPage: true });
    }
  }
  // the queue's island speaks Korean too, also after it refreshed itself
  // in the browser (its reasons come from the server in the reader's
  // language)
  await ko.setViewportSize({ width: 1440, height: 900 });
  await visit(ko, '/queue');
  assert.equal(await ko.locator('h1').textContent(), '대기열');
  const firstReason = ko.getByTestId('global-queue').locator('td.reason').first();
  await until('a refresh', async () => /[가-힣]/.test((await firstReason.textContent()) ?? ''));
  await ko.waitForResponse((r) => r.url().includes('/api/queue_view'));
  await ko.waitForLoadState('networkidle');
  assert.match(await firstReason.textContent(), /[가-힣]/, 'still Korean after the island refreshed');
  // times read in Korean ("오늘 오후 3:05 · 2분 전"), and the job page's
  // summary, refreshed from the server, stays Korean
  await visit(ko, `/jobs/${jobId}`);
  const time = ko.locator('time[data-local]').first();
  await until('a Korean time', async () => /(오늘|어제|내일).* · (지금|\d+분 전|\d+시간( \d+분)? 전)$/.test((await time.textContent()) ?? ''));
  await ko.waitForResponse((r) => r.url().includes('/api/job_panel'));
  assert.match(await ko.getByTestId('facts').textContent(), /상태/, 'the refreshed summary is Korean');
  // a refused submit says why in Korean, under the form, with its code
  await visit(ko, '/submit');
  await ko.getByLabel('이름', { exact: true }).fill('bad');
  await ko.getByLabel('스크립트 (bash로 실행)').fill('true');
  await ko.getByLabel(/^선행 작업/).fill('soon:1');
  await ko.getByRole('button', { name: '제출', exact: true }).click();
  await ko.getByText(/`soon`은\(는\) ok, any, notok 중 하나가 아닙니다/).waitFor();
  for (const v of await axe(ko)) found.push(`/submit (refused): ${v}`);
  // the header's switch goes to English and back to the same page, and
  // is kept with the account
  await ko.setViewportSize({ width: 1440, height: 900 });
  await visit(ko, '/policy');
  assert.match(await ko.getByRole('navigation', { name: '주 메뉴' }).textContent(), /대기열/);
  await ko.getByTestId('lang-switch').getByRole('link', { name: 'English' }).click();
  await ko.waitForURL((url) => url.pathname === '/policy');
  assert.equal(await ko.getAttribute('html', 'lang'), 'en');
  assert.match(await ko.locator('h1').textContent(), /How GPUs are shared/);
  // kept with the account: the Korean browser still gets English (the
  // account is left on English for the tests after this one)
  await visit(ko, '/queue');
  assert.equal(await ko.getAttribute('html', 'lang'), 'en');
  assert.equal(await ko.getByTestId('lang-switch').getByRole('link', { name: '한국어' }).getAttribute('lang'), 'ko');
  await ctx.close();

  // the admin pages, as an admin whose browser reads Korean (the admin's
  // account has no choice of its own, so Accept-Language decides)
  const adminCtx = await browser.newContext({ bypassCSP: true, locale: 'ko-KR', viewport: { width: 1440, height: 900 } });
  const koAdmin = await adminCtx.newPage();
  await signIn(koAdmin, server.base, 'admin', ADMIN_PASSWORD);
  for (const width of [1440, 375]) {
    await koAdmin.setViewportSize({ width, height: width === 375 ? 800 : 900 });
    for (const path of ADMIN_PAGES) {
      await visit(koAdmin, path);
      if ((await koAdmin.getAttribute('html', 'lang')) !== 'ko') found.push(`${path}: html lang is not ko`);
      if (!/[가-힣]/.test(await koAdmin.locator('h1').textContent())) found.push(`${path}: the title is not Korean`);
      for (const v of await axe(koAdmin)) found.push(`${path} (${width} px): ${v}`);
      if (width === 375) for (const o of await overflowing(koAdmin)) found.push(`${path} (375 px): ${o}`);
      await koAdmin.screenshot({ path: join(SCREENSHOTS, `page-${shot(path)}-ko-${width}.png`), fullPage: true });
    }
  }
  await adminCtx.close();
  assert.deepEqual(found, []);
});

test('every page at 1440 px, for the record', async () => {
  for (const [page, paths] of [[demo, [...PAGES, `/jobs/${jobId}`]], [admin, ADMIN_PAGES]]) {
    for (const path of paths) {
      await visit(page, path);
      await page.screenshot({ path: join(SCREENSHOTS, `page-${shot(path).replace(/\d+$/, 'id')}-1440.png`), fullPage: true });
    }
  }
});
