// Drives the page's mass-delete banner with puppeteer-core, as
// integration/massdelete_test.go asks: signed in with Basic, each of
// opts.views (a folder's URL) shows the banner with its words, in a
// screenshot at desktop and phone width; then "Restore all" on the first
// restores its event and the banner goes. Its one argument is JSON (see
// massDeletePageOptions). It prints one JSON line per check and exits
// non-zero with the reason when one fails.
import { click, desktop, fail, launch, open, opts, report, run, shoot, statusText, waitMs } from "./lib.mjs";

const bannerSel = ".massdelete-banner .massdelete";

async function bannerText(page) {
  await page.waitForSelector(bannerSel, { timeout: waitMs });
  return page.$eval(bannerSel, (el) => el.textContent.trim());
}

run(async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.authenticate({ username: opts.user, password: opts.password });
    await page.setViewport(desktop);
    for (const view of opts.views) {
      await open(page, view.url, "folder");
      const text = await bannerText(page);
      if (!text.includes(view.expect)) {
        fail(`${view.name}: the banner says "${text}", want "${view.expect}"`);
      }
      report({ event: "banner", name: view.name, text });
      await shoot(page, `massdelete-${view.name}`);
    }
    const first = opts.views[0];
    await open(page, first.url, "folder");
    await click(page, `${bannerSel} button.primary`);
    report({ event: "restored", text: await statusText(page) });
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: waitMs }, bannerSel);
    await page.waitForSelector('body[data-ready="folder"]', { timeout: waitMs });
    report({ event: "banner gone", name: first.name });
  } finally {
    await browser.close();
  }
});
