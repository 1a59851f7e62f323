// First load of the dashboard in Chromium on a cold cache: JavaScript transferred (compressed) and when the login page is interactive.
import { chromium, type Request } from 'playwright-core';
import { CHROMIUM } from '../tests/helpers/browser.ts';
import { machine, median, startBenchService } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

type Timing = { domInteractive: number; domContentLoaded: number; load: number; interactive: number };

const bench = await startBenchService({ COOKIE_SECURE: 'false' }, { name: 'dashboard' });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  const origin = await bench.service.app.listen({ port: 0, host: '127.0.0.1' });
  // With a CEO in place, / shows the login page (before that it is first-run setup).
  const setup = await fetch(`${origin}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench-ceo', password: 'a long enough password' }),
  });
  if (setup.status !== 201) throw new Error(`setup answered ${String(setup.status)}`);

  const rounds: { js: number; jsRaw: number; all: number; timing: Timing }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // A new context has an empty cache and no cookies: a first visit.
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const finished: Request[] = [];
    page.on('requestfinished', (r) => finished.push(r));
    await page.goto(`${origin}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const timing = await page.evaluate<Timing>(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const mark = performance.getEntriesByName('dashboard:interactive')[0];
      return { domInteractive: nav.domInteractive, domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, interactive: mark ? mark.startTime : NaN };
    })()`);
    let js = 0;
    let jsRaw = 0;
    let all = 0;
    for (const r of finished) {
      const sizes = await r.sizes();
      const response = await r.response();
      all += sizes.responseBodySize + sizes.responseHeadersSize;
      if (r.resourceType() === 'script') {
        js += sizes.responseBodySize;
        jsRaw += (await response?.body())?.length ?? 0;
      }
    }
    rounds.push({ js, jsRaw, all, timing });
    await context.close();
  }

  const m = (pick: (r: (typeof rounds)[number]) => number) => median(rounds.map(pick));
  console.log(`\n## Dashboard first load (${machine()}, ${String(ROUNDS)} cold loads of /login, median)\n`);
  console.log('| measure | value |\n|---|---|');
  console.log(`| JavaScript transferred (compressed) | ${(m((r) => r.js) / 1024).toFixed(1)} KiB (${(m((r) => r.jsRaw) / 1024).toFixed(1)} KiB uncompressed) |`);
  console.log(`| everything transferred (with headers) | ${(m((r) => r.all) / 1024).toFixed(1)} KiB |`);
  console.log(`| DOM interactive | ${m((r) => r.timing.domInteractive).toFixed(0)} ms |`);
  console.log(`| DOMContentLoaded | ${m((r) => r.timing.domContentLoaded).toFixed(0)} ms |`);
  console.log(`| load event | ${m((r) => r.timing.load).toFixed(0)} ms |`);
  console.log(`| login form interactive (\`dashboard:interactive\` mark) | ${m((r) => r.timing.interactive).toFixed(0)} ms |`);
} finally {
  await browser.close();
  await bench.close();
}
