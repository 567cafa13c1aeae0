// What the browser scripts of integration/webui*_test.go share: the
// options, the report, the viewports, launching chromium, and the steps
// that wait for the page (a view ready, a row, a dialog, a status note).
import fs from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

/** opts is the script's one argument, JSON (see the Go test's options). */
export const opts = JSON.parse(process.argv[2]);
export const report = (event) => console.log(JSON.stringify(event));


export const desktop = { width: 1280, height: 800, deviceScaleFactor: 1 };
export const phone = { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

// waitMs bounds a wait for the page or the server: a wait ends as soon as
// what it waits for is there, so the bound is only the room a busy machine
// needs (another suite beside this one), not a figure the page is held to.
export const waitMs = 60000;

export function fail(message) {
  throw new Error(message);
}

export async function ready(page, view) {
  await page.waitForSelector(`body[data-ready="${view}"]`, { timeout: waitMs });
}

export async function open(page, url, view) {
  await page.goto(opts.base + url, { waitUntil: "domcontentloaded", timeout: waitMs });
  await ready(page, view);
}

// setViewport switches the viewport and waits for the page to be ready in
// view again: puppeteer reloads the page when isMobile changes.
export async function setViewport(page, viewport) {
  const view = await page.$eval("body", (b) => b.dataset.ready);
  await page.setViewport(viewport);
  await ready(page, view);
}

// shoot writes a screenshot at desktop and phone width.
export async function shoot(page, name) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", phone]]) {
    await setViewport(page, viewport);
    const file = path.join(opts.artifacts, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: false });
    report({ event: "screenshot", file });
  }
  await setViewport(page, desktop);
}

export async function rows(page) {
  return page.$$eval("tbody tr[data-name]", (trs) => trs.map((tr) => tr.dataset.name));
}

export async function waitRow(page, name, present = true) {
  await page.waitForFunction(
    (n, p) => !!document.querySelector(`tbody tr[data-name="${CSS.escape(n)}"]`) === p,
    { timeout: waitMs }, name, present);
}

export async function statusText(page) {
  await page.waitForSelector("#status .note", { timeout: waitMs });
  return page.$eval("#status .note", (el) => el.textContent.trim());
}

export async function dismissStatus(page) {
  await page.evaluate(() => document.getElementById("status").replaceChildren());
}

// answer fills the open dialog's input (if text is given) and confirms.
export async function answer(page, text) {
  await page.waitForSelector("dialog[open]", { timeout: waitMs });
  if (text !== undefined) {
    await click(page, "dialog[open] input");
    await page.locator("dialog[open] input").setTimeout(waitMs).fill(text);
    await page.keyboard.press("Enter");
  } else {
    await click(page, "dialog[open] button[type=submit]");
  }
  await page.waitForSelector("dialog[open]", { hidden: true, timeout: waitMs });
}

// click clicks what sel selects once it is there, visible and still:
// the page renders its table anew after each change.
export async function click(page, sel) {
  await page.locator(sel).setTimeout(waitMs).click();
}

export async function clickLabel(page, label) {
  await click(page, `[aria-label="${label}"]`);
}

// download clicks a download button (label, by default the file's) and
// waits for the file name in opts.downloads, which the Go test compares
// with what it uploaded. Chromium names a download in progress otherwise.
export async function download(page, name, label = `Download ${name}`) {
  const cdp = await page.createCDPSession();
  await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: opts.downloads });
  await clickLabel(page, label);
  const file = path.join(opts.downloads, name);
  for (let i = 0; i < 100 && !fs.existsSync(file); i++) {
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!fs.existsSync(file)) {
    fail(`${name} was not downloaded`);
  }
  report({ event: "download", file });
}


// launch starts chromium headless with the test's profile directory.
export async function launch() {
  fs.mkdirSync(opts.artifacts, { recursive: true });
  return puppeteer.launch({
    executablePath: opts.chromium,
    headless: true,
    userDataDir: opts.userDataDir,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      `--user-data-dir=${opts.userDataDir}`,
      // A server on Caddy's local CA (the desktop clients' HTTPS).
      ...(opts.ignoreCertificateErrors ? ["--ignore-certificate-errors"] : []),
    ],
    protocolTimeout: 120000,
  });
}

// run runs a script's main and exits non-zero with the reason on failure.
export function run(main) {
  main().catch((err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  });
}

// The page's uploads (upload.js), for the scripts that upload.

// uploadLine returns the page's line for an upload (not one waiting for its
// file after a reload), with its state and counts.
export async function uploadLine(page, label) {
  return page.$eval(`.uploads li[data-name="${label}"]:not([data-state="waiting"])`, (li) => ({
    ...li.dataset,
    sent: Number(li.dataset.sent),
    sessionBytes: Number(li.dataset.sessionBytes),
    resumedFrom: Number(li.dataset.resumedFrom),
    text: li.querySelector(".upload-text").textContent,
  }));
}

// waitUpload waits until the upload is in one of states; one that failed
// meanwhile fails the script with the page's words.
export async function waitUpload(page, label, states, timeout = 90000) {
  const state = await page.waitForFunction((n, wanted) => {
    const li = document.querySelector(`.uploads li[data-name="${CSS.escape(n)}"]:not([data-state="waiting"])`);
    if (!li) {
      return false;
    }
    const s = li.dataset.state;
    return (wanted.includes(s) || s === "failed" || s === "cancelled") && s;
  }, { timeout, polling: "mutation" }, label, states).then((h) => h.jsonValue());
  if (!states.includes(state)) {
    fail(`${label}: ${state}: ${(await uploadLine(page, label)).text}`);
  }
  return uploadLine(page, label);
}
