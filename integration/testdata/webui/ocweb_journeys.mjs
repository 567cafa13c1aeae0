// ownCloud Web v12 (TestOwnCloudWebJourneys): the journeys of a person,
// each run on its own, its end state shot, its failed requests reported.
// Selectors follow owncloud/web's own end-to-end tests
// (tests/e2e/support/objects/app-files/resource/actions.ts,
// …/utils/sidebar.ts, …/link/actions.ts, …/share/collaborator.ts,
// …/runtime/session.ts). One JSON event a line.
import fs from "node:fs";
import path from "node:path";
import { desktop, fail, launch, opts, report, run, waitMs } from "./lib.mjs";

const loginForm = "#username";
const timeout = waitMs;

run(async () => {
  const browser = await launch();
  const context = browser.defaultBrowserContext();
  const page = await context.newPage();
  await page.setViewport(desktop);
  const failures = watch(page);
  const journey = journeyRunner(page, failures);

  let personalURL = "";
  await journey("sign in", async () => {
    await page.goto(opts.base + "/", { waitUntil: "domcontentloaded", timeout });
    await signIn(page, opts.user, opts.password);
    await page.waitForFunction(() => location.pathname.startsWith("/files/spaces/personal"), { timeout });
    if (page.url().includes("#")) fail(`Web routes by hash: ${page.url()}`);
    await row(page, opts.versioned);
    personalURL = new URL(page.url()).pathname;
  });
  if (!personalURL) {
    await browser.close();
    return;
  }

  await journey("list the personal space", async () => {
    await row(page, opts.versioned);
    await row(page, opts.folder);
  });

  await journey("open a folder", async () => {
    await page.locator(`#files-view [data-test-resource-name="${opts.folder}"]`).setTimeout(timeout).click();
    await row(page, "summary.txt");
    await page.waitForFunction((f) => location.pathname.endsWith("/" + f), { timeout }, opts.folder);
    await page.goBack();
    await row(page, opts.versioned);
  });

  await journey("create a folder", async () => {
    await click(page, "#new-file-menu-btn");
    await click(page, "#new-folder-btn");
    await fill(page, ".oc-modal input", "Made in Web");
    await click(page, ".oc-modal-body-actions-confirm");
    await row(page, "Made in Web");
  });

  const upload = path.basename(opts.upload);
  await journey("upload", async () => {
    await click(page, "#upload-menu-btn");
    const input = await page.waitForSelector("#files-file-upload-input", { timeout });
    await input.uploadFile(opts.upload);
    await row(page, upload);
  });

  await journey("download", async () => {
    const cdp = await page.createCDPSession();
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: opts.downloads });
    await action(page, upload, "download-file");
    const file = path.join(opts.downloads, upload);
    for (let i = 0; i < 100 && !fs.existsSync(file); i++) await sleep(200);
    if (!fs.existsSync(file)) fail(`${upload} was not downloaded`);
  });

  await journey("rename", async () => {
    await action(page, upload, "rename");
    const input = await page.waitForSelector(".oc-modal input", { timeout });
    await input.click({ clickCount: 3 });
    await page.keyboard.press("Backspace");
    await input.type("renamed.txt");
    await click(page, ".oc-modal-body-actions-confirm");
    await row(page, "renamed.txt");
    await row(page, upload, false);
  });

  await journey("delete and restore from the trash", async () => {
    await action(page, "renamed.txt", "delete");
    await row(page, "renamed.txt", false);
    // The personal space's trash: the overview's "Personal" entry.
    await page.goto(opts.base + personalURL.replace("/files/spaces/", "/files/trash/"), { waitUntil: "domcontentloaded", timeout });
    await page.waitForSelector(`[data-test-resource-path="renamed.txt"], [data-test-resource-name="renamed.txt"]`, { timeout });
    await page.locator(`xpath///*[@data-test-resource-path="renamed.txt" or @data-test-resource-name="renamed.txt"]/ancestor::tr//input`).setTimeout(timeout).click();
    await click(page, ".files-app-bar-actions .oc-files-actions-restore-trigger");
    await page.waitForSelector(`[data-test-resource-path="renamed.txt"], [data-test-resource-name="renamed.txt"]`, { hidden: true, timeout });
    await page.goto(opts.base + personalURL, { waitUntil: "domcontentloaded", timeout });
    await row(page, "renamed.txt");
  });

  const home = async () => {
    await page.goto(opts.base + personalURL, { waitUntil: "domcontentloaded", timeout });
    await row(page, opts.versioned);
  };

  await journey("versions panel and restore", async () => {
    await home();
    await sidebar(page, opts.versioned, "versions");
    const restored = page.waitForResponse((r) => r.url().includes("/v/") && r.request().method() === "COPY", { timeout });
    await click(page, '[data-testid="file-versions-revert-button"]');
    const resp = await restored;
    if (!resp.ok()) fail(`restoring the version: ${resp.status()}`);
    await page.waitForSelector("#oc-file-versions-sidebar", { visible: true, timeout });
  });

  await journey("favourite and the Favorites view", async () => {
    await home();
    await action(page, opts.versioned, "favorite");
    await sleep(1000);
    await page.goto(opts.base + "/files/favorites", { waitUntil: "domcontentloaded", timeout });
    await row(page, opts.versioned);
  });

  await journey("search", async () => {
    await home();
    await fill(page, ".oc-search-input", "summary");
    // On a busy machine Web may not have taken in the typed term when
    // Enter comes, and then stays where it is: Enter is pressed again.
    // Or its results page runs two searches at once and the one it
    // aborts sets the results to none after the other has answered
    // (packages/web-app-search/src/views/List.vue catches the abort as a
    // failure): "No results found" until the page is loaded again, as a
    // person would. The results' rows name a file in two parts (base
    // name, extension).
    const within = (ms, fn) => page.waitForFunction(fn, { timeout: ms }).then(() => true, () => false);
    const opened = () => within(10000, () => document.body.innerText.includes('Search results for "summary"'));
    const listed = () => within(15000, () => [...document.querySelectorAll("tbody tr")].some((tr) => tr.textContent.replace(/\s+/g, "").includes("summary.txt")));
    const deadline = Date.now() + 2 * timeout;
    let step = "";
    for (;;) {
      if (step === "opened, file not listed") {
        await page.reload({ waitUntil: "domcontentloaded", timeout });
      } else {
        await page.focus(".oc-search-input");
        await page.keyboard.press("Enter");
      }
      step = !(await opened()) ? "not opened" : !(await listed()) ? "opened, file not listed" : "";
      if (!step) break;
      if (Date.now() > deadline) fail(`the search results page: ${step}`);
      report({ event: "retry", journey: "search", step });
    }
  });

  await journey("list the project spaces", async () => {
    await page.goto(opts.base + "/files/spaces/projects", { waitUntil: "domcontentloaded", timeout });
    await page.waitForFunction((n) => document.body.innerText.includes(n), { timeout }, opts.project);
  });

  let linkURL = "";
  await journey("create a public link", async () => {
    await home();
    await sidebar(page, opts.folder, "sharing");
    await click(page, "#files-file-link-add");
    const created = page.waitForResponse((r) => r.url().includes("createLink") && r.request().method() === "POST", { timeout });
    if (await page.$(".oc-modal-body-actions-confirm")) {
      await click(page, ".oc-modal-body-actions-confirm");
    }
    const resp = await created;
    if (!resp.ok()) fail(`createLink: ${resp.status()}`);
    linkURL = (await resp.json()).link?.webUrl || "";
    report({ event: "link", url: linkURL });
    if (!linkURL) fail("no link URL");
    await page.waitForSelector("#oc-files-file-link .files-links-name", { timeout });
  });

  await journey("share with a user", async () => {
    const searched = page.waitForResponse((r) => r.url().includes("/graph/v1.0/users?"), { timeout });
    await click(page, "#files-share-invite-input");
    await page.type("#files-share-invite-input", opts.recipient, { delay: 50 });
    if (!(await searched).ok()) fail("the sharees search failed");
    // The recipient offered, highlighted: Enter picks it, as a person does.
    await page.waitForSelector(`[data-testid="recipient-autocomplete-item-${opts.recipientName}"]`, { visible: true, timeout });
    await sleep(500);
    await page.keyboard.press("Enter");
    await page.waitForSelector(".files-share-invite-recipient, .vs__selected", { timeout });
    const invited = page.waitForResponse((r) => r.url().endsWith("invite") && r.request().method() === "POST", { timeout });
    await page.evaluate(() => {
      document.querySelector("#new-collaborators-form-create-button")
        ?.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    });
    const resp = await invited;
    if (!resp.ok()) fail(`invite: ${resp.status()}`);
    await page.waitForSelector('[data-testid^="collaborator-user-item-"]', { timeout });
  });

  await journey("log out", async () => {
    const visited = [];
    page.on("framenavigated", (f) => { if (f === page.mainFrame()) visited.push(f.url()); });
    await closeSidebar(page).catch(() => {});
    await click(page, "#_userMenuButton");
    await click(page, "#oc-topbar-account-logout");
    // The provider asks to confirm, then sends the browser back.
    // The provider may ask to confirm; then it sends the browser to Web's
    // post-logout address, and Web, signed out, on to the sign-in form.
    await page.waitForFunction((iss) => location.href.startsWith(iss), { timeout }, opts.issuer);
    await page.waitForFunction(() => !!document.querySelector("#logout, #username"), { timeout });
    if (await page.$("#logout")) {
      await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout }), click(page, "#logout")]);
    }
    await page.waitForSelector(loginForm, { timeout });
    const back = visited.filter((u) => u.startsWith(opts.base));
    report({ event: "after logout", visited: back });
    if (!back.includes(opts.base + "/")) fail(`the provider did not send the browser back to ${opts.base}/: ${back}`);
  });

  await journey("open the public link signed out", async (shoot) => {
    if (!linkURL) fail("no link was made");
    const anon = await browser.createBrowserContext();
    const p = await anon.newPage();
    await p.setViewport(desktop);
    const f = watch(p);
    try {
      await p.goto(linkURL, { waitUntil: "domcontentloaded", timeout });
      await row(p, "summary.txt");
      await shoot(p);
    } finally {
      failures.push(...f);
      await anon.close();
    }
  });

  await journey("the recipient opens Shared with me", async (shoot) => {
    const other = await browser.createBrowserContext();
    const p = await other.newPage();
    await p.setViewport(desktop);
    const f = watch(p);
    try {
      await p.goto(opts.base + "/files/shares/with-me", { waitUntil: "domcontentloaded", timeout });
      await signIn(p, opts.recipient, opts.recipientPassword);
      await row(p, opts.folder);
      await p.locator(`#files-view [data-test-resource-name="${opts.folder}"]`).setTimeout(timeout).click();
      await row(p, "summary.txt");
      await shoot(p);
    } finally {
      failures.push(...f);
      await other.close();
    }
  });

  await browser.close();
});

// journeyRunner runs one journey, reports whether it completed, with a
// screenshot of where it ended and the requests that failed meanwhile. A
// journey in a page of its own shoots it with the function it is given.
function journeyRunner(page, failures) {
  let n = 0;
  return async (name, fn) => {
    n += 1;
    failures.length = 0;
    const file = path.join(opts.artifacts, `ocweb-${String(n).padStart(2, "0")}-${name.replace(/[^a-z]+/gi, "-")}.png`);
    let shot = false;
    const shoot = async (p) => {
      await p.screenshot({ path: file });
      shot = true;
    };
    let error = "";
    try {
      await fn(shoot);
    } catch (err) {
      error = String(err && err.message ? err.message : err).split("\n")[0];
    }
    if (!shot) await page.screenshot({ path: file }).catch(() => {});
    report({ event: "journey", name, ok: !error, error, screenshot: file, failed: [...failures] });
  };
}

// watch collects the page's requests that failed or answered ≥ 400.
function watch(page) {
  const failed = [];
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.request().method()} ${r.url()} → ${r.status()}`);
  });
  page.on("requestfailed", (r) => failed.push(`${r.method()} ${r.url()} → ${r.failure()?.errorText}`));
  page.on("pageerror", (e) => failed.push(`page error: ${String(e.message).split("\n")[0]}`));
  return failed;
}

async function signIn(page, user, password) {
  await page.waitForSelector(loginForm, { timeout });
  await page.type("#username", user);
  await page.type("#password", password);
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout }), page.click("#submit")]);
}

async function click(page, sel) {
  await page.locator(sel).setTimeout(timeout).click();
}

async function fill(page, sel, text) {
  await page.locator(sel).setTimeout(timeout).fill(text);
}

// row waits for a resource of the files table (or tiles) to be there, or
// to be gone.
async function row(page, name, present = true) {
  await page.waitForFunction(
    (n, want) => !!document.querySelector(`#files-view [data-test-resource-name="${CSS.escape(n)}"], #files-global-search [data-test-resource-name="${CSS.escape(n)}"], [data-test-resource-name="${CSS.escape(n)}"]`) === want,
    { timeout }, name, present);
}

// action picks one of a resource's actions from its row's context menu.
async function action(page, name, trigger) {
  await click(page, `xpath///span[@data-test-resource-name="${name}"]/ancestor::tr[contains(@class, "oc-tbody-tr")]//button[contains(@class, "resource-table-btn-action-dropdown")]`);
  await page.waitForSelector("#oc-files-context-menu", { visible: true, timeout });
  await click(page, `#oc-files-context-menu .oc-files-actions-${trigger}-trigger`);
}

// sidebar opens a resource's details and then one of its panels.
async function sidebar(page, name, panel) {
  await action(page, name, "show-details");
  await page.waitForSelector("#app-sidebar", { timeout });
  await click(page, `#sidebar-panel-${panel}-select`);
  await page.waitForSelector(`#sidebar-panel-${panel}`, { visible: true, timeout });
}

async function closeSidebar(page) {
  await sleep(300);
  for (const sel of ["#app-sidebar .is-active-sub-panel .header__close", "#app-sidebar .is-active-root-panel .header__close"]) {
    const el = await page.$(sel);
    if (el && (await el.isVisible())) {
      await el.click();
      return;
    }
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
