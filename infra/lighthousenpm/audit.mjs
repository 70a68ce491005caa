// Lighthouse on a list of screens in one Chromium tab (infra/lighthousenpm.Audit). The plan comes
// as JSON on stdin: the Chromium to drive, how to sign in (the page's form: a key input, its
// submit button, an element that shows once signed in), and the screens in order, each audited
// before or after signing in. A signed-in screen is audited in the tab that signed in, so that
// the page finds its token where a user's tab keeps it (sessionStorage is per tab): Lighthouse is
// told not to reset storage, and the HTTP cache is cleared before every screen instead, so that
// each one loads cold as Lighthouse's own reset would have it. After each audit the page is
// probed for the element the screen must show (the real screen was audited, not a sign-in form).
// It prints one JSON object: each screen's category scores (0–100), its layout shift, the audits
// that did not pass, and what the probe found (of the median run when a screen is run more than once).
import fs from 'node:fs';
import path from 'node:path';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { computeMedianRun, filterToValidRuns } from 'lighthouse/core/lib/median-run.js';
import puppeteer from 'puppeteer-core';

const plan = JSON.parse(await new Promise((resolve, reject) => {
  let s = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => { s += d; });
  process.stdin.on('end', () => resolve(s));
  process.stdin.on('error', reject);
}));

// items are the first few rows of an audit's details (the console's errors, the shifted
// elements …), each as short JSON: what a failure message needs to say where the fault is.
function items(a) {
  const rows = a.details?.items ?? [];
  return rows.slice(0, 5).map((r) => JSON.stringify(r, (k, v) => (k === 'boundingRect' || k === 'lhId' || k === 'path' ? undefined : v)).slice(0, 400));
}

const categories = ['performance', 'accessibility', 'best-practices', 'seo'];
const browser = await puppeteer.launch({
  executablePath: plan.chromium,
  headless: true, // the new headless mode (--headless=new)
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const out = { version: '', screens: [] };
try {
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  let signedIn = false;
  for (const screen of plan.screens) {
    if (screen.signedIn && !signedIn) {
      await page.goto(plan.signIn.url, { waitUntil: 'load' });
      await page.waitForSelector(plan.signIn.key, { visible: true });
      await page.type(plan.signIn.key, plan.signIn.apiKey);
      await page.click(plan.signIn.submit);
      await page.waitForSelector(plan.signIn.ready, { visible: true });
      signedIn = true;
    }
    // Lighthouse's performance score varies with the machine's load: each run measures the
    // machine first (its benchmark index; Lighthouse warns that a host at or under 1000 lowers
    // the score). A screen is audited until `runs` runs found the machine fast enough (at most
    // maxRuns times), and Lighthouse's own median of those runs is reported; with none, the
    // median of them all, marked as measured on a busy machine.
    const lhrs = [];
    const fast = (r) => (r.environment?.benchmarkIndex ?? 0) > (plan.minBenchmark ?? 0);
    const want = Math.max(1, plan.runs ?? 1);
    for (let i = 0; i < Math.max(want, plan.maxRuns ?? want) && lhrs.filter(fast).length < want; i++) {
      await cdp.send('Network.clearBrowserCache');
      const flags = { output: 'json', logLevel: 'error', onlyCategories: categories, disableStorageReset: true };
      const run = (await lighthouse(screen.url, flags, desktopConfig, page)).lhr;
      if (plan.reportDir) fs.writeFileSync(path.join(plan.reportDir, `${screen.name.replace(/\W+/g, '-')}-${i + 1}.json`), JSON.stringify(run));
      lhrs.push(run);
    }
    const judged = filterToValidRuns(lhrs.filter(fast));
    const valid = judged.length ? judged : filterToValidRuns(lhrs);
    const lhr = valid.length ? computeMedianRun(valid) : lhrs[lhrs.length - 1];
    out.version = lhr.lighthouseVersion;
    const scores = {};
    for (const c of categories) scores[c] = lhr.categories[c]?.score == null ? -1 : Math.round(lhr.categories[c].score * 100);
    const failing = [];
    for (const c of categories) {
      for (const ref of lhr.categories[c]?.auditRefs ?? []) {
        const a = lhr.audits[ref.id];
        if (!a || a.score === null || a.score >= 0.9 || a.scoreDisplayMode === 'informative' || a.scoreDisplayMode === 'notApplicable' || a.scoreDisplayMode === 'manual') continue;
        failing.push({ category: c, id: a.id, title: a.title, score: a.score, weight: ref.weight, value: a.displayValue ?? '', items: items(a) });
      }
    }
    const probe = await page.evaluate((sel) => ({
      found: !!document.querySelector(sel),
      h1: Array.from(document.querySelectorAll('h1'), (h) => h.textContent.trim()),
      path: location.pathname + location.search,
    }), screen.expect);
    out.screens.push({
      name: screen.name, url: lhr.finalDisplayedUrl, scores, failing, probe,
      performanceRuns: lhrs.map((r) => Math.round((r.categories.performance?.score ?? -0.01) * 100)),
      benchmarks: lhrs.map((r) => Math.round(r.environment?.benchmarkIndex ?? -1)),
      busy: judged.length === 0,
      scripts: (lhr.audits['network-requests']?.details?.items ?? []).filter((r) => r.resourceType === 'Script')
        .map((r) => ({ url: r.url, transferSize: r.transferSize ?? 0, resourceSize: r.resourceSize ?? 0 })),
      benchmarkIndex: lhr.environment?.benchmarkIndex ?? -1,
      cls: lhr.audits['cumulative-layout-shift']?.numericValue ?? -1,
      lcpMs: lhr.audits['largest-contentful-paint']?.numericValue ?? -1,
      runtimeError: lhr.runtimeError?.message ?? '',
      warnings: lhr.runWarnings ?? [],
    });
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
