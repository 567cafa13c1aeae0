// Drives Debian's chromium with puppeteer-core through the browser page
// of a real Caddy, as integration/webui_test.go asks: the overview, a big
// folder, a folder's download as a zip, a folder's changes, the trash, a
// file's details, favourite, link and versions, a viewer's refused
// restore, and "not found" for a non-member, with screenshots at desktop
// and phone width (and a folder and a file's details in dark mode) in
// opts.artifacts. Its one argument is JSON (see webui_test.go's driveOptions).
// It prints one JSON line per measured figure or check and exits non-zero
// with the reason when a check fails.
import fs from "node:fs";
import path from "node:path";
import {
  answer, click, clickLabel, desktop, dismissStatus, download, fail, launch, open, opts, phone,
  ready, report, rows, run, setViewport, shoot, statusText, waitRow,
} from "./lib.mjs";

async function overview(page) {
  await open(page, "/", "overview");
  const cards = await page.$$eval(".card", (cs) => cs.map((c) => c.textContent));
  if (!cards.some((c) => c.includes("Personal")) || !cards.some((c) => c.includes("Physics") && c.includes("Manager"))) {
    fail(`overview shows ${JSON.stringify(cards)}`);
  }
  if ((await page.$$(".quota-track, .quota-text")).length === 0) {
    fail("overview shows no quota");
  }
  report({ event: "check", name: "overview", cards: cards.length });
  await shoot(page, "overview");
}

// bigFolder opens the folder of many files: the time from navigation to a
// table with rows and a working filter, best of three loads.
async function bigFolder(page) {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    await open(page, opts.bigFolder, "folder");
    await page.waitForSelector("tbody tr[data-name]");
    best = Math.min(best, Date.now() - started);
    const timings = await page.evaluate(() => [...performance.getEntriesByType("resource"), ...performance.getEntriesByType("mark")].map((e) => [e.name.slice(-40), Math.round(e.startTime), Math.round(e.duration), e.transferSize]));
    report({ event: "timings", load: Date.now() - started, timings });
  }
  const count = await page.$eval(".count", (el) => el.textContent);
  if (count.replace(/\D/g, "") !== String(opts.bigCount)) {
    fail(`big folder says ${count}`);
  }
  const shown = (await rows(page)).length;
  await shoot(page, "big-folder");
  // The page stays usable: the filter answers at once.
  // The filter is reached by keyboard ("/"); the figure is the time one
  // keystroke takes to narrow 10,000 names down to one row.
  await page.keyboard.press("/");
  await page.keyboard.type(opts.bigNeedle.slice(0, -1));
  const t0 = Date.now();
  await page.keyboard.type(opts.bigNeedle.slice(-1));
  await page.waitForFunction(() => document.querySelectorAll("tbody tr[data-name]").length === 1, { timeout: 5000 });
  const filterMs = Date.now() - t0;
  report({ event: "figure", name: "bigFolderMs", value: best, rows: shown });
  report({ event: "figure", name: "bigFilterMs", value: filterMs });
  if (best > opts.budgetMs) {
    fail(`the folder of ${opts.bigCount} files took ${best} ms to show, more than ${opts.budgetMs}`);
  }
  // Clear the filter with the keyboard; the focus is still in it.
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  // (At least the first page: the end of the table was in view while the
  // filter left one row, which may have asked for the next page already.)
  await page.waitForFunction((n) => document.querySelectorAll("tbody tr[data-name]").length >= n, { timeout: 5000 }, shown);
  // Scrolling to the end of the table adds the next rows.
  const before = await page.$$eval("tbody tr[data-name]", (trs) => trs.length);
  await page.$eval(".more", (el) => el.scrollIntoView());
  await page.waitForFunction((n) => document.querySelectorAll("tbody tr[data-name]").length > n, { timeout: 5000 }, before);
  // So does the button, for the keyboard, which keeps its focus.
  const more = await page.$$eval("tbody tr[data-name]", (trs) => trs.length);
  await page.focus(".more button");
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => document.querySelectorAll("tbody tr[data-name]").length > n, { timeout: 5000 }, more);
  if (!(await page.$eval(".more button", (b) => b === document.activeElement))) {
    fail("the show-more button lost the focus");
  }
}

async function folderChanges(page) {
  await open(page, opts.workFolder, "folder");
  if (await page.$eval(".more button", (b) => b.offsetParent !== null)) {
    fail("a folder shown whole offers to show more");
  }
  await shoot(page, "folder");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  await shoot(page, "folder-dark");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  // The folder as a zip, which the Go test unpacks and compares.
  const folderName = await page.$eval("h1", (el) => el.textContent);
  await shoot(page, "folder-zip");
  await download(page, `${folderName}.zip`, `Download ${folderName} as zip`);
  // New folder, then rename it.
  await click(page, "button.primary");
  await answer(page, "Drafts");
  await waitRow(page, "Drafts");
  await dismissStatus(page);
  await clickLabel(page, "Rename Drafts");
  await answer(page, "Final");
  await waitRow(page, "Final");
  await waitRow(page, "Drafts", false);
  await dismissStatus(page);
  // A refusal in words: the name is taken.
  await click(page, "button.primary");
  await answer(page, "Final");
  const refusal = await statusText(page);
  if (!refusal.includes("already there")) {
    fail(`creating a folder twice says ${JSON.stringify(refusal)}`);
  }
  report({ event: "check", name: "refusal", text: refusal });
  await dismissStatus(page);
  await download(page, "notes.txt");
  // Delete to the trash, and restore.
  await clickLabel(page, "Delete notes.txt");
  await answer(page);
  await waitRow(page, "notes.txt", false);
  const deleted = await statusText(page);
  if (!deleted.includes("trash")) {
    fail(`deleting says ${JSON.stringify(deleted)}`);
  }
  await dismissStatus(page);
  await clickLabel(page, "Delete Final");
  await answer(page);
  await waitRow(page, "Final", false);
  await dismissStatus(page);
  await click(page, 'a[href="#trash"]');
  await ready(page, "trash");
  await waitRow(page, "notes.txt");
  await waitRow(page, "Final");
  await shoot(page, "trash");
  await clickLabel(page, "Restore notes.txt");
  await waitRow(page, "notes.txt", false);
  await dismissStatus(page);
  await clickLabel(page, "Delete Final permanently");
  await answer(page);
  await waitRow(page, "Final", false);
  await page.waitForSelector("tr.empty", { timeout: 10000 });
  await dismissStatus(page);
  await click(page, ".tools a.button");
  await ready(page, "folder");
  await waitRow(page, "notes.txt");
  report({ event: "check", name: "changes" });
}

// details marks a file as a favourite from the list, opens a file's
// details and versions, shoots them at both widths and restores the oldest
// version; the Go test checks both through WebDAV.
async function details(page) {
  await open(page, opts.workFolder, "folder");
  await clickLabel(page, `Add ${opts.favorite} to favourites`);
  await page.waitForSelector(`[aria-label="Remove ${opts.favorite} from favourites"][aria-pressed="true"]`, { timeout: 20000 });
  await dismissStatus(page);
  for (const [width, viewport] of [["phone", phone], ["desktop", desktop]]) {
    await setViewport(page, viewport);
    await clickLabel(page, `Details of ${opts.versioned}`);
    await page.waitForSelector("dialog.details .version-list li", { timeout: 20000 });
    const file = path.join(opts.artifacts, `details-versions-${width}.png`);
    await page.screenshot({ path: file, fullPage: false });
    report({ event: "screenshot", file });
    if (width === "phone") {
      await page.keyboard.press("Escape");
      await page.waitForSelector("dialog.details", { hidden: true, timeout: 10000 });
    }
  }
  const facts = await page.$eval("dialog.details .facts", (el) => el.innerText);
  if (!facts.includes("Checksums") || !/SHA1:/i.test(facts) || !facts.includes("File id")) {
    fail(`the details say ${JSON.stringify(facts)}`);
  }
  const versions = await page.$$eval("dialog.details .version-list li", (lis) => lis.length);
  if (versions !== opts.versions) {
    fail(`the versions panel lists ${versions} versions, want ${opts.versions}`);
  }
  // The private link, through the clipboard.
  await click(page, "dialog.details .tools button");
  const copied = await statusText(page);
  if (!copied.includes("copied")) {
    fail(`copying the link says ${JSON.stringify(copied)}`);
  }
  report({ event: "link", url: await page.evaluate(() => navigator.clipboard.readText()) });
  await dismissStatus(page);
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  const dark = path.join(opts.artifacts, "details-versions-dark-desktop.png");
  await page.screenshot({ path: dark, fullPage: false });
  report({ event: "screenshot", file: dark });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  // The oldest is last: newest first.
  await click(page, "dialog.details .version-list li:last-child button");
  const restored = await statusText(page);
  if (!restored.includes("content again")) {
    fail(`restoring a version says ${JSON.stringify(restored)}`);
  }
  await page.waitForFunction((n) => document.querySelectorAll("dialog.details .version-list li").length === n, { timeout: 20000 }, opts.versions);
  await dismissStatus(page);
  await click(page, 'dialog.details [aria-label="Close the details"]');
  await page.waitForSelector("dialog.details", { hidden: true, timeout: 10000 });
  // The dialog closes with Escape and gives the focus back to its button.
  await clickLabel(page, `Details of ${opts.locked}`);
  await page.waitForSelector("dialog.details .facts", { timeout: 20000 });
  const lock = await page.$eval("dialog.details .facts", (el) => el.innerText);
  if (!lock.includes(`by ${opts.lockOwner}, until`)) {
    fail(`the details of a locked file say ${JSON.stringify(lock)}`);
  }
  await page.keyboard.press("Escape");
  await page.waitForSelector("dialog.details", { hidden: true, timeout: 10000 });
  if (!(await page.evaluate((l) => document.activeElement && document.activeElement.getAttribute("aria-label") === l, `Details of ${opts.locked}`))) {
    fail("closing the details lost the focus");
  }
  report({ event: "check", name: "details", versions });
}

// viewerRestore opens the versions as a viewer of the space, who may list
// them but not restore one: the refusal is in words.
async function viewerRestore(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(desktop);
  await page.authenticate({ username: opts.stranger.user, password: opts.stranger.password });
  await open(page, opts.workFolder, "folder");
  await clickLabel(page, `Details of ${opts.versioned}`);
  await click(page, "dialog.details .version-list li:last-child button");
  const refusal = await statusText(page);
  if (!refusal.includes("you may not restore versions in this space")) {
    fail(`a viewer's restore says ${JSON.stringify(refusal)}`);
  }
  report({ event: "check", name: "viewerRestore", text: refusal });
  await context.close();
}

// notFound opens a space the user is no member of and a path that does
// not exist: the same page, naming nothing.
async function notFound(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.authenticate({ username: opts.stranger.user, password: opts.stranger.password });
  const texts = [];
  for (const url of [opts.foreignFolder, opts.missingFolder]) {
    const res = await page.goto(opts.base + url, { waitUntil: "domcontentloaded" });
    if (res.status() !== 404) {
      fail(`${url} as ${opts.stranger.user}: status ${res.status()}`);
    }
    await ready(page, "notfound");
    texts.push(await page.$eval("body", (b) => b.innerText));
  }
  if (texts[0] !== texts[1] || !texts[0].includes("Not found")) {
    fail(`not found pages differ or say nothing: ${JSON.stringify(texts)}`);
  }
  for (const hint of opts.hints) {
    if (texts[0].includes(hint)) {
      fail(`the not found page names ${hint}`);
    }
  }
  report({ event: "check", name: "notFound" });
  await context.close();
}

async function main() {
  const browser = await launch();
  await browser.defaultBrowserContext().overridePermissions(opts.base, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on("console", (msg) => {
      if (msg.type() === "error" && !/status of 40[49]|status of 412|status of 405/.test(msg.text())) {
        problems.push(msg.text());
      }
    });
    page.on("pageerror", (err) => problems.push(String(err)));
    await page.setViewport(desktop);
    await page.authenticate({ username: opts.user, password: opts.password });
    await overview(page);
    await bigFolder(page);
    await folderChanges(page);
    await details(page);
    await viewerRestore(browser);
    await notFound(browser);
    if (problems.length) {
      fail(`the page reported errors: ${problems.join("; ")}`);
    }
  } finally {
    await browser.close();
  }
}

run(main);
