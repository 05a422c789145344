// Drives web/index.html in headless Chromium (playwright-core over Debian's /usr/bin/chromium):
// types a sentence, translates it, prints the translation and saves a screenshot.
//   node web/check.js URL SENTENCE SCREENSHOT.png
'use strict';
const { chromium } = require('playwright-core');

async function main() {
  const [url, sentence, screenshot] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 520 } });
    page.on('console', (m) => console.error('page: ' + m.text()));
    await page.goto(url);
    await page.waitForSelector('#go:not([disabled]), body[data-translated="error"]', { timeout: 60000 });
    if (await page.getAttribute('body', 'data-translated') === 'error') throw new Error(await page.textContent('#model'));
    await page.fill('#input', sentence);
    await page.click('#go');
    await page.waitForSelector('body[data-translated]', { timeout: 60000 });
    const state = await page.getAttribute('body', 'data-translated');
    const output = await page.textContent('#output');
    await page.screenshot({ path: screenshot });
    console.log(JSON.stringify({ state, status: await page.textContent('#status'), output }));
    if (state !== 'yes' || !output.trim()) process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error('check-browser: ' + e.message); process.exit(1); });
