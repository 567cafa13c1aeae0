// The browser page signed in with OpenID Connect (TestWebUIOIDC): the
// provider's form, in-page navigation, a new folder, a download, the token
// renewed, a reload, "not found", sign-out. It prints one JSON event a line.
import path from "node:path";
import { answer, click, desktop, download, fail, launch, opts, phone, ready, report, run, setViewport, shoot, waitRow } from "./lib.mjs";

const loginForm = "#username";

run(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewport(desktop);
  // Requests to the provider's authorization endpoint and its sign-in
  // form, to tell a sign-in through the session from one that asked.
  const seen = { authorize: 0, form: 0 };
  page.on("request", (req) => {
    const url = req.url();
    if (url.startsWith(`${opts.issuer}/auth`)) seen.authorize += 1;
    if (url.startsWith(`${opts.issuer}/interaction/`) && req.method() === "GET") seen.form += 1;
  });

  // A folder URL: the page sends the browser to the provider's form, and
  // comes back to that folder signed in.
  await page.goto(opts.base + opts.workFolder, { waitUntil: "domcontentloaded", timeout: 30000 });
  await signIn(page);
  await ready(page, "folder");
  await expectPath(page, opts.workFolder);
  const signedInAt = Date.now();
  report({ event: "check", name: "signed in", ...seen });

  // In-page navigation: into a sub-folder, back by the breadcrumb, and by
  // the browser's back button; no second sign-in.
  const formsBefore = seen.form;
  const authorizeBefore = seen.authorize;
  await click(page, `tr[data-name="${opts.subFolder}"] a.name`);
  await waitRow(page, opts.subFolder, false);
  await ready(page, "folder");
  await expectPath(page, `${opts.workFolder}${opts.subFolder}/`);
  await click(page, `#crumbs a[href="${opts.workFolder}"]`);
  await waitRow(page, opts.subFolder);
  await page.goBack();
  await waitRow(page, opts.subFolder, false);
  await page.goForward();
  await waitRow(page, opts.subFolder);
  if (seen.form !== formsBefore || seen.authorize !== authorizeBefore) {
    fail(`navigating signed in again: ${JSON.stringify(seen)}`);
  }
  report({ event: "check", name: "navigation" });

  // A new folder and a download, with the token.
  await click(page, ".tools button.primary");
  await answer(page, opts.newFolder);
  await waitRow(page, opts.newFolder);
  await download(page, opts.download);

  // Past the access token's lifetime the page still works: it renewed.
  const wait = signedInAt + opts.tokenTTLMs + 3000 - Date.now();
  if (wait > 0) {
    await new Promise((r) => setTimeout(r, wait));
  }
  await click(page, `tr[data-name="${opts.subFolder}"] a.name`);
  await ready(page, "folder");
  await expectPath(page, `${opts.workFolder}${opts.subFolder}/`);
  await click(page, `#crumbs a[href="${opts.workFolder}"]`);
  await waitRow(page, opts.newFolder);
  if (seen.form !== formsBefore) {
    fail("the renewal asked for the password");
  }
  report({ event: "check", name: "renewed" });

  // A reload signs in again through the provider's session: no form.
  await page.reload({ waitUntil: "domcontentloaded" });
  await ready(page, "folder");
  await expectPath(page, opts.workFolder);
  await waitRow(page, opts.newFolder);
  if (seen.form !== formsBefore || seen.authorize === authorizeBefore) {
    fail(`the reload did not sign in through the session: ${JSON.stringify(seen)}`);
  }
  report({ event: "check", name: "reload" });

  // Someone else's files: "not found", no hint.
  await page.goto(opts.base + opts.foreign, { waitUntil: "domcontentloaded" });
  await ready(page, "notfound");
  const text = await page.$eval("main", (m) => m.innerText);
  if (!text.includes("Not found") || text.includes("bob")) {
    fail(`the foreign folder shows ${JSON.stringify(text)}`);
  }

  // The overview with "Sign out", at both widths (the phone viewport
  // reloads the page: it signs in through the session again).
  await click(page, "a.brand");
  await ready(page, "overview");
  await page.waitForSelector("#signout", { visible: true });
  await shoot(page, "oidc-overview");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  await setViewport(page, phone);
  await page.screenshot({ path: path.join(opts.artifacts, "oidc-overview-dark-phone.png") });
  await page.emulateMediaFeatures([]);
  await setViewport(page, desktop);

  // Sign out: the provider ends its session and sends the browser back to
  // a signed-out page; signing in again asks for the password.
  await click(page, "#signout");
  await page.waitForSelector("#logout", { timeout: 30000 });
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded" }), click(page, "#logout")]);
  await ready(page, "signedout");
  await expectPath(page, "/");
  await shoot(page, "oidc-signedout");
  await click(page, "main button.primary");
  await page.waitForSelector(loginForm, { timeout: 30000 });
  report({ event: "check", name: "signed out" });
  await browser.close();
});

// signIn fills the provider's form.
async function signIn(page) {
  await page.waitForSelector(loginForm, { timeout: 30000 });
  await page.type("#username", opts.user);
  await page.type("#password", opts.password);
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
}

async function expectPath(page, want) {
  const got = await page.evaluate(() => location.pathname);
  if (got !== want) {
    fail(`at ${got}, want ${want}`);
  }
}
