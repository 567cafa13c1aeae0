// Drives the share dialog and the public link page with puppeteer-core, as
// integration/webui_share_test.go asks: einstein creates a link with a
// password to a folder and a file-drop link to another in the dialog and
// copies them; fresh browser contexts (no sign-in) open the links' pages:
// the password is asked for (a wrong one refused), the folder listed and a
// file downloaded; changed to an upload link in the dialog, it takes a
// file; the drop shows an upload area alone and takes a file;
// a token that never existed, and the first link once deleted in the
// dialog, show the not-found words; the invitee finds
// the folder under "Shared with me". Its one argument
// is JSON (see shareOptions). It prints one JSON line per check and exits
// non-zero with the reason when one fails.
import path from "node:path";
import { click, clickLabel, desktop, fail, launch, open, opts, phone, ready, report, rows, run, waitRow, waitUpload } from "./lib.mjs";

// The phone's viewport keeps isMobile off, which would reload the page
// (and forget a link's password, kept in the page's memory only).
const phoneSameLoad = { ...phone, isMobile: false, hasTouch: false };

async function shootBoth(page, name) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", phoneSameLoad]]) {
    await shootOne(page, `${name}-${width}`, viewport);
  }
  await page.setViewport(desktop);
}

async function shootOne(page, name, viewport) {
  await page.setViewport(viewport);
  const file = path.join(opts.artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  report({ event: "screenshot", file });
}

// createLink opens the share dialog of a row, creates a link of a type
// with a name (and a password), copies it and returns its address.
async function createLink(page, row, { type, name, password, shoot }) {
  await clickLabel(page, `Share ${row}`);
  await page.waitForSelector('dialog.share .share-body[data-ready="ready"]', { timeout: 20000 });
  await page.select('dialog.share [aria-label="Type of the new link"]', type);
  await page.locator('dialog.share [aria-label="Name of the new link"]').setTimeout(10000).fill(name);
  if (password) {
    await page.locator('dialog.share [aria-label="Password of the new link"]').setTimeout(10000).fill(password);
  }
  await click(page, "dialog.share .share-links .share-new button[type=submit]");
  await page.waitForSelector("dialog.share li[data-link]", { timeout: 20000 });
  const facts = await page.$eval("dialog.share li[data-link] .share-facts", (el) => el.textContent);
  if (facts.includes("no password") === !!password) {
    fail(`the new link ${name} says ${JSON.stringify(facts)}`);
  }
  if (shoot) {
    await invite(page);
    await shootBoth(page, "share-dialog");
  }
  await clickLabel(page, `Copy ${name}`);
  const url = await page.evaluate(() => navigator.clipboard.readText());
  if (!/\/s\/[A-Za-z0-9_-]{20,}$/.test(url)) {
    fail(`the copied link of ${row} is ${JSON.stringify(url)}`);
  }
  await clickLabel(page, "Close the share dialog");
  await page.waitForSelector("dialog[open]", { hidden: true, timeout: 10000 });
  report({ event: "link", row, type, url });
  return url;
}

// invite finds opts.invitee by a part of the name, invites them with the
// first role offered (a viewer) and then makes them an editor.
async function invite(page) {
  const who = opts.invitee;
  await page.locator('dialog.share [aria-label="Find people and groups"]').setTimeout(10000).fill(who.slice(0, 3));
  await page.waitForFunction((n) => [...document.querySelectorAll("dialog.share .share-result")].some((b) => b.textContent.includes(n)), { timeout: 20000 }, who);
  await page.$$eval("dialog.share .share-result", (buttons, n) => buttons.find((b) => b.textContent.includes(n)).click(), who);
  await click(page, "dialog.share .share-people .share-new button[type=submit]:not([disabled])");
  await page.waitForSelector("dialog.share li[data-permission]", { timeout: 20000 });
  await page.select("dialog.share li[data-permission] select", opts.editorRole);
  await page.waitForFunction(() => document.querySelector("#status .note")?.textContent.includes("role changed"), { timeout: 20000 });
  report({ event: "check", name: "invited", who });
}

// changeType makes link name of row another type in the share dialog.
async function changeType(page, row, name, type) {
  await clickLabel(page, `Share ${row}`);
  await page.waitForSelector('dialog.share .share-body[data-ready="ready"]', { timeout: 20000 });
  await page.select(`dialog.share [aria-label="Type of ${name}"]`, type);
  await page.waitForFunction((n) => document.querySelector("#status .note")?.textContent.includes(`${n} changed`), { timeout: 20000 }, name);
  await clickLabel(page, "Close the share dialog");
  await page.waitForSelector("dialog[open]", { hidden: true, timeout: 10000 });
  report({ event: "check", name: "link type changed", type });
}

// uploadThroughLink uploads a file into the folder of an upload link.
async function uploadThroughLink(browser, url) {
  const { context, page } = await publicPage(browser, url);
  await ready(page, "public-password");
  await enterPassword(page, opts.linkPassword);
  await ready(page, "public-folder");
  const input = await page.waitForSelector('input[data-upload="files"]', { timeout: 10000 });
  await input.uploadFile(opts.uploaded);
  const name = path.basename(opts.uploaded);
  await waitUpload(page, name, ["done"]);
  await waitRow(page, name);
  report({ event: "check", name: "uploaded through the link" });
  await context.close();
}

// publicPage opens url in a fresh browser context, which has no sign-in.
async function publicPage(browser, url) {
  const context = await browser.createBrowserContext();
  await context.setDownloadBehavior({ policy: "allow", downloadPath: opts.downloads });
  const page = await context.newPage();
  await page.setViewport(desktop);
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 30000 });
  return { context, page };
}

async function enterPassword(page, password) {
  await page.locator(".password-form input[type=password]").setTimeout(10000).fill(password);
  await click(page, ".password-form button[type=submit]");
}

// openProtectedFolder enters a wrong password, then the right one, lists
// the folder and downloads the file.
async function openProtectedFolder(browser, url) {
  const { context, page } = await publicPage(browser, url);
  await ready(page, "public-password");
  await enterPassword(page, `${opts.linkPassword}-wrong`);
  await page.waitForSelector("#password-problem", { timeout: 20000 });
  const problem = await page.$eval("#password-problem", (el) => el.textContent);
  if (!problem.includes("wrong")) {
    fail(`after a wrong password the page says ${JSON.stringify(problem)}`);
  }
  report({ event: "check", name: "wrong password refused", problem });
  await shootOne(page, "public-password-phone", phoneSameLoad);
  await page.setViewport(desktop);
  await enterPassword(page, opts.linkPassword);
  await ready(page, "public-folder");
  await waitRow(page, opts.file);
  const names = await rows(page);
  const heading = await page.$eval("main h1", (el) => el.textContent);
  if (heading !== opts.shared || names.join() !== opts.file) {
    fail(`the public folder is ${JSON.stringify(heading)} with ${JSON.stringify(names)}`);
  }
  const shown = await page.$eval("body", (el) => el.innerText);
  if (shown.includes(opts.user) || shown.includes("Personal")) {
    fail("the public page names the owner's space");
  }
  await clickLabel(page, `Download ${opts.file}`);
  await waitForFile(path.join(opts.downloads, opts.file));
  report({ event: "download", file: opts.file });
  await shootBoth(page, "public-folder");
  await context.close();
}

async function waitForFile(file) {
  const fs = await import("node:fs");
  for (let i = 0; i < 100 && !fs.existsSync(file); i++) {
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!fs.existsSync(file)) {
    fail(`${path.basename(file)} was not downloaded`);
  }
}

// dropFile uploads a file through the file drop's page, which lists
// nothing.
async function dropFile(browser, url) {
  const { context, page } = await publicPage(browser, url);
  await ready(page, "public-drop");
  const words = await page.$eval("main", (el) => el.innerText);
  if (!words.includes("you cannot see what is there")) {
    fail(`the file drop's page says ${JSON.stringify(words)}`);
  }
  if ((await page.$$("table, tbody tr, [data-upload=folder]")).length !== 0) {
    fail("the file drop's page shows a listing or a folder upload");
  }
  const input = await page.waitForSelector('input[data-upload="files"]', { timeout: 10000 });
  await input.uploadFile(opts.dropped);
  const done = await waitUpload(page, path.basename(opts.dropped), ["done"]);
  report({ event: "check", name: "dropped", text: done.text });
  if ((await page.$$("tbody tr")).length !== 0) {
    fail("after the upload the file drop's page lists something");
  }
  await shootOne(page, "public-drop-phone", phoneSameLoad);
  await context.close();
}

// sharedWithMe signs the invitee in, in a context of their own: the
// overview's "Shared with me" leads to the shared folder and its file.
async function sharedWithMe(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.authenticate({ username: opts.invitee, password: opts.inviteePassword });
  await page.setViewport(desktop);
  await open(page, "/", "overview");
  await page.waitForFunction(() => [...document.querySelectorAll(".card")].some((c) => c.textContent.includes("Shared with me")), { timeout: 20000 });
  await page.$$eval(".card", (cards) => cards.find((c) => c.textContent.includes("Shared with me")).querySelector("a").click());
  await ready(page, "folder");
  await waitRow(page, opts.shared);
  await click(page, `tbody tr[data-name="${opts.shared}"] a.name`);
  await ready(page, "folder");
  await waitRow(page, opts.file);
  const crumbs = await page.$eval("#crumbs", (el) => el.innerText);
  if (!crumbs.includes("Shared with me")) {
    fail(`the shared folder's breadcrumbs say ${JSON.stringify(crumbs)}`);
  }
  if (await page.$(`[aria-label="Share ${opts.file}"]`)) {
    fail("a recipient is offered to share again");
  }
  report({ event: "check", name: "shared with me", crumbs });
  await shootBoth(page, "shared-with-me");
  // In a project space where the invitee is an editor, they may share.
  await open(page, opts.editorFolder, "folder");
  await page.waitForSelector(`[aria-label="Share ${opts.editorRow}"]`, { timeout: 20000 });
  report({ event: "check", name: "an editor may share" });
  await context.close();
}

// deleteLink deletes link name of row in the share dialog.
async function deleteLink(page, row, name) {
  await clickLabel(page, `Share ${row}`);
  await page.waitForSelector('dialog.share .share-body[data-ready="ready"]', { timeout: 20000 });
  await clickLabel(page, `Delete ${name}`);
  await page.waitForSelector("dialog.share li[data-link]", { hidden: true, timeout: 20000 });
  await clickLabel(page, "Close the share dialog");
  await page.waitForSelector("dialog[open]", { hidden: true, timeout: 10000 });
  report({ event: "check", name: "link deleted" });
}

// notFound opens a link's page that must show the not-found words.
async function notFound(browser, url) {
  const { context, page } = await publicPage(browser, url);
  await ready(page, "public-notfound");
  const words = await page.$eval("main", (el) => el.innerText);
  if (!words.includes("This link does not exist or has expired")) {
    fail(`an unknown token's page says ${JSON.stringify(words)}`);
  }
  report({ event: "check", name: "not found", url, words });
  await context.close();
}

async function main() {
  const browser = await launch();
  try {
    await browser.defaultBrowserContext().overridePermissions(opts.base, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
    const page = await browser.newPage();
    await page.authenticate({ username: opts.user, password: opts.password });
    await page.setViewport(desktop);
    await open(page, opts.folder, "folder");
    const protectedURL = await createLink(page, opts.shared, { type: "view", name: "For the lab", password: opts.linkPassword, shoot: true });
    const dropURL = await createLink(page, opts.drop, { type: "createOnly", name: "Homework" });
    // The link names the server as it is reached from outside; the test
    // reaches it on loopback.
    await openProtectedFolder(browser, opts.base + new URL(protectedURL).pathname);
    await changeType(page, opts.shared, "For the lab", "upload");
    await uploadThroughLink(browser, opts.base + new URL(protectedURL).pathname);
    await dropFile(browser, opts.base + new URL(dropURL).pathname);
    await notFound(browser, opts.base + opts.unknown);
    await deleteLink(page, opts.shared, "For the lab");
    await notFound(browser, opts.base + new URL(protectedURL).pathname);
    await sharedWithMe(browser);
  } finally {
    await browser.close();
  }
}

run(main);
