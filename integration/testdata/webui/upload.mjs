// Drives the browser page's uploads with puppeteer-core, as
// integration/webui_upload_test.go asks: three files by the file picker,
// the 300 MB one cut mid-way by the Go test's proxy, the page reloaded and
// the same file picked again to resume it; a folder with a sub-folder by
// the folder picker and another dropped; an upload paused and resumed (with screenshots of it
// in progress); and a file past a space's quota refused in words. Its one
// argument is JSON (see uploadOptions). It prints one JSON line per check
// and exits non-zero with the reason when one fails.
import path from "node:path";
import { desktop, fail, launch, open, opts, phone, ready, report, run, uploadLine, waitRow, waitUpload } from "./lib.mjs";

const name = (file) => path.basename(file);

// network works the Go test's proxy: "up" after a cut, "cut?after=N".
async function network(what) {
  const res = await fetch(`${opts.network}/${what}`, { method: "POST" });
  if (!res.ok) {
    fail(`network ${what}: ${res.status}`);
  }
}

async function pick(page, input, ...files) {
  const el = await page.waitForSelector(`input[data-upload="${input}"]`, { timeout: 10000 });
  await el.uploadFile(...files);
}

// cutAndReload uploads three files; the proxy cuts the big one's
// connection, the page says it tries again, and the page is reloaded.
async function cutAndReload(page) {
  await pick(page, "files", ...opts.small, opts.big);
  for (const file of opts.small) {
    await waitUpload(page, name(file), ["done"]);
  }
  const cut = await waitUpload(page, name(opts.big), ["retrying"]);
  report({ event: "check", name: "connection lost", sent: cut.sent, text: cut.text });
  for (const file of opts.small) {
    await waitRow(page, name(file));
  }
  await network("up");
  await page.reload({ waitUntil: "domcontentloaded" });
  await ready(page, "folder");
}

// resume picks the big file again after the reload: it goes on from the
// server's offset.
async function resume(page) {
  const big = name(opts.big);
  const waiting = await page.waitForSelector(`.uploads li[data-name="${big}"][data-state="waiting"]`, { timeout: 10000 });
  const offer = await waiting.evaluate((li) => li.textContent);
  if (!offer.includes("Pick the file again to resume")) {
    fail(`after the reload the page says ${offer}`);
  }
  await pick(page, "files", opts.big);
  const done = await waitUpload(page, big, ["done"]);
  report({ event: "resumed", from: done.resumedFrom, sent: done.sessionBytes, offer });
  if (done.resumedFrom <= 0 || done.sessionBytes >= done.sent) {
    fail(`big file resumed from ${done.resumedFrom} sending ${done.sessionBytes} bytes`);
  }
  await waitRow(page, big);
}

async function uploadFolder(page) {
  await pick(page, "folder", opts.album);
  await waitUpload(page, "album/cover.txt", ["done"]);
  await waitUpload(page, "album/disc 1/track 01.txt", ["done"]);
  await waitRow(page, "album");
  report({ event: "check", name: "folder uploaded" });
}

// dropFolder drops a folder on the folder view, as a file manager would:
// its files go up and its sub-folders, an empty one too, are made.
async function dropFolder(page) {
  const box = await (await page.$("main")).boundingBox();
  const point = { x: box.x + 40, y: box.y + 40 };
  const data = { items: [], files: [opts.dropped], dragOperationsMask: 1 };
  await page.mouse.dragEnter(point, data);
  await page.mouse.dragOver(point, data);
  await page.mouse.drop(point, data);
  await waitUpload(page, "dropped/a.txt", ["done"]);
  await waitUpload(page, "dropped/inner/b.txt", ["done"]);
  await waitRow(page, "dropped");
  report({ event: "check", name: "folder dropped" });
}

// shootInProgress writes the screenshots of an upload going on; the
// phone's viewport keeps isMobile off, which would reload the page.
async function shootInProgress(page) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", { ...phone, isMobile: false, hasTouch: false }]]) {
    await page.setViewport(viewport);
    const file = path.join(opts.artifacts, `upload-progress-${width}.png`);
    await page.screenshot({ path: file });
    report({ event: "screenshot", file });
  }
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  const file = path.join(opts.artifacts, "upload-progress-phone-dark.png");
  await page.screenshot({ path: file });
  report({ event: "screenshot", file });
  await page.emulateMediaFeatures([]);
  await page.setViewport(desktop);
}

// pauseAndResume sends a file slowly (the browser's upload throttled),
// whose connection is cut and which the page takes up again by itself,
// pauses it, sees no byte move, and resumes it.
async function pauseAndResume(page) {
  const label = name(opts.paused);
  await page.emulateNetworkConditions({ download: -1, upload: 1 << 20, latency: 0 });
  // The connection is cut once more on the way: the page goes on by itself.
  await network(`cut?after=${2 << 20}`);
  await pick(page, "files", opts.paused);
  await page.waitForFunction((n) => {
    const li = document.querySelector(`.uploads li[data-name="${CSS.escape(n)}"]`);
    return li && Number(li.dataset.sent) > (3 << 20) && li.querySelector(".upload-text").textContent.includes("left");
  }, { timeout: 30000, polling: 100 }, label);
  await shootInProgress(page);
  await page.locator(`[aria-label="Pause ${label}"]`).setTimeout(10000).click();
  const paused = await waitUpload(page, label, ["paused"]);
  await new Promise((r) => setTimeout(r, 1500));
  const still = await uploadLine(page, label);
  if (still.state !== "paused" || still.sent !== paused.sent || still.sessionBytes > paused.sessionBytes) {
    fail(`paused at ${paused.sent} (${paused.sessionBytes} sent), then ${still.state} at ${still.sent} (${still.sessionBytes} sent)`);
  }
  report({ event: "check", name: "paused", sent: paused.sent, text: paused.text });
  await page.emulateNetworkConditions(null);
  await page.locator(`[aria-label="Resume ${label}"]`).setTimeout(10000).click();
  await waitUpload(page, label, ["done"]);
  await waitRow(page, label);
  report({ event: "check", name: "resumed after pause" });
}

// quotaRefused uploads to the tiny space: the file past its quota is
// refused in words before its first byte, the other goes up.
async function quotaRefused(page) {
  await open(page, opts.tinyFolder, "folder");
  await pick(page, "files", opts.tooBig, opts.fits);
  const refused = await waitUpload(page, name(opts.tooBig), ["failed"]);
  if (refused.state !== "failed" || !refused.text.includes("quota")) {
    fail(`the file past the quota: ${refused.state}: ${refused.text}`);
  }
  report({ event: "refused", sent: refused.sessionBytes, text: refused.text });
  await waitUpload(page, name(opts.fits), ["done"]);
  await waitRow(page, name(opts.fits));
}

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.authenticate({ username: opts.user, password: opts.password });
    await page.setViewport(desktop);
    await open(page, opts.folder, "folder");
    for (const [phase, step] of [["cut and reload", cutAndReload], ["resume", resume], ["folder", uploadFolder], ["drop", dropFolder], ["pause", pauseAndResume], ["quota", quotaRefused]]) {
      const started = Date.now();
      await step(page);
      report({ event: "figure", name: phase, ms: Date.now() - started });
    }
    const saved = await page.evaluate(() => localStorage.getItem("davspaces.uploads"));
    if (saved && saved !== "{}") {
      fail(`the browser still keeps unfinished uploads: ${saved}`);
    }
    report({ event: "check", name: "nothing kept", saved });
  } finally {
    await browser.close();
  }
}

run(main);
