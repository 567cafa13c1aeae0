// Drives Debian's chromium with puppeteer-core through the browser page
// of a real Caddy, as integration/webui_test.go asks: the overview, a big
// folder, a folder's download as a zip, a folder's changes, the trash, a
// file's details, favourite, link and versions, move and copy (the
// folder picker, drag & drop, a name clash, a lock's refusal), a text file
// shown in a tab and an HTML file downloaded, a viewer's refused restore,
// and "not found" for a non-member, with screenshots at desktop
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

// coreShare is the share of one core a busy process gets now: the CPU
// time a loop of about ms milliseconds was given over its wall time, 1 on
// an idle machine, less while other jobs compete for the cores.
function coreShare(ms = 200) {
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage();
  let x = 0;
  while (performance.now() - wall0 < ms) {
    x += Math.sqrt(x + 1);
  }
  const cpu = process.cpuUsage(cpu0);
  return Math.min(1, (cpu.user + cpu.system) / 1000 / (performance.now() - wall0));
}

// descendsFrom tells whether process pid has root among its ancestors.
function descendsFrom(pid, root) {
  for (let p = pid, hops = 0; p > 1 && hops < 8; hops++) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${p}/stat`, "utf8");
    } catch {
      return false;
    }
    p = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (p === root) {
      return true;
    }
  }
  return false;
}

// rendererWaitMs is how long the main threads of this chromium's renderers
// have waited so far, runnable, for a core (run_delay of
// /proc/PID/schedstat, Linux): the page's own work runs on them, so what
// the load of the machine added to a page load is their wait during it.
// It is null where the kernel does not tell.
function rendererWaitMs(browser) {
  const root = browser.process()?.pid;
  let total = null;
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) {
      continue;
    }
    let cmdline;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmdline.includes("--type=renderer") || !descendsFrom(Number(pid), root)) {
      continue;
    }
    try {
      total += Number(fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
    } catch {
      // The renderer ended meanwhile.
    }
  }
  return total;
}

// bigFolder opens the folder of many files: the time from navigation to a
// table with rows and a working filter, best of three loads. The budget is
// the page's on an idle machine. Each load is judged by its time less what
// the renderers' main threads waited for a core during it, which another
// suite beside this one adds, or, where the kernel does not tell, by its
// time scaled by the share of a core a busy process got just before and
// just after it (1 when idle).
async function bigFolder(page, browser) {
  let best = Infinity;
  let bestRaw = 0;
  for (let i = 0; i < 3; i++) {
    const before = coreShare();
    const waited0 = rendererWaitMs(browser);
    const started = Date.now();
    await open(page, opts.bigFolder, "folder");
    await page.waitForSelector("tbody tr[data-name]");
    const took = Date.now() - started;
    const waited1 = rendererWaitMs(browser);
    const share = (before + coreShare()) / 2;
    const waited = waited0 === null || waited1 === null ? null : Math.max(0, waited1 - waited0);
    const idle = waited === null ? took * share : took - waited;
    if (idle < best) {
      best = Math.round(idle);
      bestRaw = took;
    }
    const timings = await page.evaluate(() => [...performance.getEntriesByType("resource"), ...performance.getEntriesByType("mark")].map((e) => [e.name.slice(-40), Math.round(e.startTime), Math.round(e.duration), e.transferSize]));
    report({ event: "timings", load: took, waited: waited === null ? null : Math.round(waited), share: Math.round(share * 100) / 100, timings });
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
  report({ event: "figure", name: "bigFolderMs", value: best, took: bestRaw, rows: shown });
  report({ event: "figure", name: "bigFilterMs", value: filterMs });
  if (best > opts.budgetMs) {
    fail(`the folder of ${opts.bigCount} files took ${best} ms of an idle machine to show (${bestRaw} ms on this one now), more than ${opts.budgetMs}`);
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

// pickerAt waits until the folder picker shows the folder named current
// with its folders listed.
async function pickerAt(page, current) {
  await page.waitForFunction((c) => {
    const here = document.querySelector("dialog.picker .picker-crumbs [aria-current]");
    return here && here.textContent === c && !document.querySelector("dialog.picker .picker-list").textContent.includes("Loading");
  }, { timeout: 20000 }, current);
}

// pickerFolder opens the folder named name in the picker.
async function pickerFolder(page, name) {
  await page.waitForFunction((n) => [...document.querySelectorAll("dialog.picker .picker-folder")].some((b) => b.textContent === n), { timeout: 20000 }, name);
  await page.evaluate((n) => [...document.querySelectorAll("dialog.picker .picker-folder")].find((b) => b.textContent === n).click(), name);
  await pickerAt(page, name);
}

async function pickerButton(page, label) {
  await page.evaluate((l) => [...document.querySelectorAll("dialog.picker .dialog-buttons button")].find((b) => b.textContent === l).click(), label);
  await page.waitForSelector("dialog.picker", { hidden: true, timeout: 10000 });
}

// dragRow drops the row of name on the element sel selects, as a mouse
// would (Ctrl held for a copy): the events a browser sends for a drag.
async function dragRow(page, name, sel, copy = false) {
  await page.waitForSelector(sel, { timeout: 20000 });
  await page.evaluate((n, s, ctrlKey) => {
    const from = document.querySelector(`tbody tr[data-name="${CSS.escape(n)}"]`);
    const to = document.querySelector(s);
    const dataTransfer = new DataTransfer();
    from.dispatchEvent(new DragEvent("dragstart", { bubbles: true, cancelable: true, dataTransfer }));
    const over = new DragEvent("dragover", { bubbles: true, cancelable: true, dataTransfer, ctrlKey });
    to.dispatchEvent(over);
    if (!over.defaultPrevented) {
      throw new Error(`${s} does not take a dropped row`);
    }
    to.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer, ctrlKey }));
    from.dispatchEvent(new DragEvent("dragend", { bubbles: true, dataTransfer }));
  }, name, sel, copy);
}

// moveCopy moves a file into a sub-folder and copies one to another space
// with the folder picker (shot at both widths), settles a name clash by
// keeping both, drags a row onto a folder row and, with Ctrl, onto a
// breadcrumb, and shows a locked file's refusal in words. The Go test
// checks each through WebDAV.
async function moveCopy(page) {
  const { moved, copied, dragged, folder, locked } = opts.moveCopy;
  await open(page, opts.workFolder, "folder");
  const here = await page.$eval("h1", (el) => el.textContent);
  for (const [width, viewport] of [["phone", phone], ["desktop", desktop]]) {
    await setViewport(page, viewport);
    await clickLabel(page, `Move or copy ${moved}`);
    // The picker starts in the file's folder.
    await pickerAt(page, here);
    await page.waitForSelector("dialog.picker .picker-folder", { timeout: 20000 });
    await page.waitForFunction(() => document.querySelector("dialog.picker select").options.length > 1, { timeout: 20000 });
    const file = path.join(opts.artifacts, `picker-${width}.png`);
    await page.screenshot({ path: file, fullPage: false });
    report({ event: "screenshot", file });
    if (width === "desktop") {
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      const dark = path.join(opts.artifacts, "picker-dark-desktop.png");
      await page.screenshot({ path: dark, fullPage: false });
      report({ event: "screenshot", file: dark });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    } else {
      await page.keyboard.press("Escape");
      await page.waitForSelector("dialog.picker", { hidden: true, timeout: 10000 });
    }
  }
  // Move into the sub-folder.
  await pickerFolder(page, folder);
  await pickerButton(page, "Move here");
  const movedText = await statusText(page);
  if (!movedText.includes(`Moved “${moved}” to “${folder}”`)) {
    fail(`moving with the picker says ${JSON.stringify(movedText)}`);
  }
  await waitRow(page, moved, false);
  await dismissStatus(page);
  // Copy to another space, by the keyboard: Enter on the row's button.
  await page.focus(`[aria-label="Move or copy ${copied}"]`);
  await page.keyboard.press("Enter");
  await pickerAt(page, here);
  await page.waitForFunction(() => document.querySelector("dialog.picker select").options.length > 1, { timeout: 20000 });
  const other = await page.$$eval("dialog.picker select option", (os, name) => os.find((o) => o.textContent === name).value, opts.moveCopy.otherSpace);
  await page.select("dialog.picker select", other);
  await pickerAt(page, "Top");
  await pickerButton(page, "Copy here");
  const copiedText = await statusText(page);
  if (!copiedText.includes(`Copied “${copied}”`)) {
    fail(`copying to another space says ${JSON.stringify(copiedText)}`);
  }
  // The keyboard goes on from the row's button.
  await page.waitForFunction((l) => document.activeElement && document.activeElement.getAttribute("aria-label") === l, { timeout: 10000 }, `Move or copy ${copied}`);
  await dismissStatus(page);
  // A copy beside itself gets a number.
  await clickLabel(page, `Move or copy ${copied}`);
  await pickerAt(page, here);
  await pickerButton(page, "Copy here");
  await waitRow(page, opts.moveCopy.kept);
  await dismissStatus(page);
  // A second copy to the other space: the name is taken there; keep both.
  await clickLabel(page, `Move or copy ${copied}`);
  await pickerAt(page, here);
  await page.waitForFunction(() => document.querySelector("dialog.picker select").options.length > 1, { timeout: 20000 });
  await page.select("dialog.picker select", other);
  await pickerAt(page, "Top");
  await pickerButton(page, "Copy here");
  await page.waitForSelector("dialog.clash", { timeout: 20000 });
  const clash = path.join(opts.artifacts, "picker-clash-desktop.png");
  await page.screenshot({ path: clash, fullPage: false });
  report({ event: "screenshot", file: clash });
  await click(page, "dialog.clash button.primary");
  const keptText = await statusText(page);
  if (!keptText.includes(`as “${opts.moveCopy.kept}”`)) {
    fail(`keeping both says ${JSON.stringify(keptText)}`);
  }
  await dismissStatus(page);
  // Drag a row onto a folder row: a move.
  await dragRow(page, dragged, `tbody tr[data-name="${folder}"]`);
  await waitRow(page, dragged, false);
  await dismissStatus(page);
  // A locked file is refused in words.
  await dragRow(page, locked, `tbody tr[data-name="${folder}"]`);
  const lockedText = await statusText(page);
  if (!lockedText.includes("locked")) {
    fail(`moving a locked file says ${JSON.stringify(lockedText)}`);
  }
  await dismissStatus(page);
  // In the sub-folder, Ctrl-drag a row onto the crumb of the folder above: a copy.
  await open(page, `${opts.workFolder}${encodeURIComponent(folder)}/`, "folder");
  await waitRow(page, dragged);
  await dragRow(page, dragged, `#crumbs a[href$="/${encodeURIComponent(here)}/"]`, true);
  const crumbText = await statusText(page);
  if (!crumbText.includes(`Copied “${dragged}” to “${here}”`)) {
    fail(`a Ctrl-drag onto the crumb says ${JSON.stringify(crumbText)}`);
  }
  await dismissStatus(page);
  // A folder's private link names its space in the breadcrumbs.
  await open(page, opts.workFolder, "folder");
  await clickLabel(page, `Details of ${folder}`);
  await page.waitForSelector("dialog.details .facts", { timeout: 20000 });
  await click(page, "dialog.details .tools button");
  await statusText(page);
  const link = await page.evaluate(() => navigator.clipboard.readText());
  await dismissStatus(page);
  await page.goto(link, { waitUntil: "domcontentloaded", timeout: 30000 });
  await ready(page, "folder");
  const linkCrumbs = await page.$eval("#crumbs", (el) => el.innerText);
  if (!linkCrumbs.includes(opts.moveCopy.spaceName)) {
    fail(`the private link's breadcrumbs say ${JSON.stringify(linkCrumbs)}, not the space's name`);
  }
  report({ event: "check", name: "moveCopy" });
}

// inlineViewing opens a text file from its row in a tab of its own, where
// it shows in a sandbox (an opaque origin), and opens an HTML file's
// address, which downloads instead of rendering.
async function inlineViewing(browser, page) {
  await open(page, opts.workFolder, "folder");
  const opened = new Promise((resolve) => browser.once("targetcreated", resolve));
  await click(page, `tbody tr[data-name="${opts.inline.text}"] a.name`);
  const tab = await (await opened).page();
  await tab.waitForFunction((t) => document.body && document.body.innerText.includes(t), { timeout: 20000 }, opts.inline.textContent);
  const origin = await tab.evaluate(() => window.origin);
  if (origin !== "null") {
    fail(`the text file's tab runs as origin ${origin}, want an opaque origin`);
  }
  await tab.close();
  const cdp = await page.createCDPSession();
  await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: opts.downloads });
  const navigation = await page.goto(opts.base + opts.workFolder + encodeURIComponent(opts.inline.html)).then(() => "rendered", (err) => err.message);
  const file = path.join(opts.downloads, opts.inline.html);
  for (let i = 0; i < 100 && !fs.existsSync(file); i++) {
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!fs.existsSync(file)) {
    fail(`opening ${opts.inline.html} did not download it (${navigation})`);
  }
  report({ event: "check", name: "inlineViewing", origin, html: navigation });
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
      // A file without a preview (404, 415) or a busy server (429)
      // leaves the file's icon: the previews' refusals are no problem.
      const preview = /[?&]preview=1/.test((msg.location() || {}).url || "");
      if (msg.type() === "error" && !preview && !/status of 40[49]|status of 412|status of 405|status of 423/.test(msg.text())) {
        problems.push(msg.text());
      }
    });
    page.on("pageerror", (err) => problems.push(String(err)));
    await page.setViewport(desktop);
    await page.authenticate({ username: opts.user, password: opts.password });
    await overview(page);
    await bigFolder(page, browser);
    await folderChanges(page);
    await details(page);
    await moveCopy(page);
    await inlineViewing(browser, page);
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
