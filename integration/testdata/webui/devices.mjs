// The "Devices and app passwords" view (TestWebUIDevices*), signed in
// with OpenID Connect or, with opts.basic, Basic: the empty
// state, a new app password read from the page once, then, after the Go
// test used it with rclone and cadaver, its revocation in the page. The
// full run adds a scoped, read-only one, the revoke confirmation and the
// cap's refusal, with screenshots of each state. It prints one JSON event
// a line and waits for a line on stdin where the Go test has work to do.
import path from "node:path";
import readline from "node:readline";
import { click, desktop, fail, launch, opts, ready, report, run } from "./lib.mjs";

// The phone's width without isMobile, which would make puppeteer reload
// the page and lose what is shown once.
const phoneWidth = { width: 390, height: 844, deviceScaleFactor: 2 };

const stdin = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// goOn waits for the Go test's line.
async function goOn() {
  const { done } = await stdin.next();
  if (done) {
    fail("the Go test closed stdin");
  }
}

// shoot writes a screenshot of the page as it is at desktop and phone
// width, the whole page.
async function shoot(page, name, fullPage = true) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", phoneWidth]]) {
    await page.setViewport(viewport);
    await new Promise((r) => setTimeout(r, 150));
    const file = path.join(opts.artifacts, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage });
    report({ event: "screenshot", file });
  }
  await page.setViewport(desktop);
}

async function text(page, sel) {
  return page.$eval(sel, (el) => (["INPUT", "TEXTAREA"].includes(el.tagName) ? el.value : el.textContent).trim());
}

// create fills the form and submits it; scope, if given, picks a space,
// a folder in it and read-only.
async function create(page, label, { expiry, space, folder, readOnly } = {}) {
  await click(page, "#new-app-password");
  await page.waitForSelector("#ap-label", { visible: true });
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
  if (focused !== "ap-label") {
    fail(`the form opened with the focus on ${focused}, want the name`);
  }
  await page.type("#ap-label", label);
  if (expiry) {
    await page.select("#ap-expiry", expiry);
  }
  if (space) {
    await page.select("#ap-space", space);
    if (folder) {
      await click(page, "#ap-choose-folder");
      await page.waitForSelector("dialog.picker[open]");
      await click(page, `dialog.picker .picker-folder ::-p-text(${folder})`);
      await page.waitForFunction((f) => document.querySelector("dialog.picker [aria-current]")?.textContent === f, {}, folder);
      await click(page, "dialog.picker .dialog-buttons button.primary");
      await page.waitForSelector("dialog.picker", { hidden: true });
    }
  }
  if (readOnly) {
    await click(page, "#ap-readonly");
  }
}

// submit creates the password the form describes and reads it, once.
async function submit(page, screenshot) {
  const created = page.waitForResponse((res) => res.url().includes("/auth-app/tokens?") && res.request().method() === "POST");
  await click(page, ".ap-form button[type=submit]");
  const res = await created;
  if (!res.ok()) {
    return { status: res.status(), url: res.url() };
  }
  await page.waitForSelector("#ap-password", { visible: true });
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
  if (focused !== "ap-password") {
    fail(`the new password is shown with the focus on ${focused}`);
  }
  const shown = {
    status: res.status(),
    url: res.url(),
    password: await text(page, "#ap-password"),
    user: await text(page, "#ap-user"),
    rclone: await text(page, "#ap-rclone"),
    davURL: await text(page, "#ap-url"),
    secrets: await text(page, "#ap-davfs2-secrets"),
  };
  if (screenshot) {
    await shoot(page, screenshot);
  }
  await click(page, "#ap-done");
  await page.waitForSelector("#ap-password", { hidden: true });
  const html = await page.content();
  if (html.includes(shown.password)) {
    fail("the password is still in the page after Done");
  }
  return shown;
}

// revoke revokes the row of label in the page and returns when the
// server answered, with the time of the answer.
async function revoke(page, label, screenshot) {
  await click(page, `li.ap-item[data-label="${label}"] .ap-revoke`);
  await page.waitForSelector("dialog[open]");
  if (screenshot) {
    await shoot(page, screenshot);
  }
  const deleted = page.waitForResponse((res) => res.url().includes("/auth-app/tokens?token=") && res.request().method() === "DELETE");
  await click(page, "dialog[open] button[type=submit]");
  const res = await deleted;
  const at = Date.now();
  if (res.status() !== 200) {
    fail(`DELETE answered ${res.status()}`);
  }
  await page.waitForSelector(`li.ap-item[data-label="${label}"]`, { hidden: true });
  return at;
}

run(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewport(desktop);

  // The view's address: the provider's form, then back to the view; or,
  // signed in with Basic, the browser's prompt.
  if (opts.basic) {
    await page.authenticate({ username: opts.user, password: opts.password });
  }
  await page.goto(`${opts.base}/#devices`, { waitUntil: "domcontentloaded", timeout: 30000 });
  if (!opts.basic) {
    await page.waitForSelector("#username", { timeout: 30000 });
    await page.type("#username", opts.user);
    await page.type("#password", opts.password);
    await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
  }
  await ready(page, "devices");
  await page.waitForSelector(".ap-empty");
  const empty = await text(page, ".ap-empty");
  if (!empty.includes("No app passwords yet")) {
    fail(`the empty view says ${JSON.stringify(empty)}`);
  }
  // The header's link leads here from the spaces.
  await click(page, "a.brand");
  await ready(page, "overview");
  await click(page, "#devices-link");
  await ready(page, "devices");
  if (await page.$eval("#devices-link", (a) => a.getAttribute("aria-current")) !== "page") {
    fail("the header's link does not say that the view is the page's");
  }
  if (opts.screenshots) {
    await shoot(page, "devices-empty");
  }

  await create(page, opts.label);
  if (opts.screenshots) {
    await shoot(page, "devices-form");
  }
  const made = await submit(page, opts.screenshots && "devices-shown");
  report({ event: "created", ...made });
  await goOn();

  if (opts.screenshots) {
    // A second, narrowed one: the lab's folder, read-only, for 30 days.
    await create(page, opts.scopedLabel, { expiry: "720h", space: opts.space, folder: opts.folder, readOnly: true });
    await shoot(page, "devices-form-scoped");
    const scoped = await submit(page);
    report({ event: "scoped", url: scoped.url, davURL: scoped.davURL, scope: await text(page, `li.ap-item[data-label="${opts.scopedLabel}"] .ap-scope`) });
    await page.waitForSelector(`li.ap-item[data-label="${opts.label}"]`);
    await shoot(page, "devices-list");
  }

  const revokedAt = await revoke(page, opts.label, opts.screenshots && "devices-revoke");
  report({ event: "revoked", at: revokedAt });

  if (opts.screenshots) {
    await goOn();
    // The Go test filled the user's app passwords to the cap.
    await page.reload({ waitUntil: "domcontentloaded" });
    await ready(page, "devices");
    await create(page, "One too many");
    const refused = await submit(page);
    if (refused.status < 400) {
      fail(`the password over the cap was made: ${refused.status}`);
    }
    await page.waitForSelector(".ap-problem", { visible: true });
    const problem = await text(page, ".ap-problem");
    report({ event: "refused", status: refused.status, problem });
    // What is on screen: the list below is a hundred rows long.
    await shoot(page, "devices-error", false);
  }
  await browser.close();
});
