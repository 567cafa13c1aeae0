// A Nextcloud client's Login Flow v2 in the browser (TestLoginFlow*): the
// login URL asks to sign in (OpenID Connect) or comes after the browser's
// Basic prompt, names the client and the account, and grants; a second
// flow is cancelled; an unknown link says so. Screenshots of each state at
// desktop and phone width. With opts.revoke it only revokes the client's
// app password in the page's Devices and app passwords view. It prints one
// JSON event a line.
import path from "node:path";
import { click, desktop, fail, launch, opts, ready, report, run } from "./lib.mjs";

// phone is the phone width without isMobile: switching to it does not
// reload the page, which would lose an OpenID Connect sign-in (the token
// lives in the page only).
const phone = { width: 390, height: 844, deviceScaleFactor: 2 };

run(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewport(desktop);
  if (opts.basic) {
    await page.authenticate({ username: opts.user, password: opts.password });
  }
  if (opts.revoke) {
    await revoke(page, opts.revoke);
    await browser.close();
    return;
  }

  // The flow to grant.
  await page.goto(opts.login, { waitUntil: "domcontentloaded", timeout: 30000 });
  if (!opts.basic) {
    await ready(page, "loginflow-signin");
    await expectText(page, opts.client);
    await shoot(page, "loginflow-signin");
    await signIn(page);
  }
  await ready(page, "loginflow-grant");
  await expectText(page, opts.client);
  await expectText(page, opts.user);
  await shoot(page, "loginflow-grant");
  await click(page, "#loginflow-grant");
  await ready(page, "loginflow-granted");
  await shoot(page, "loginflow-granted");
  report({ event: "check", name: "granted" });

  // The link again before the client polled: granted already.
  await page.goto(opts.login, { waitUntil: "domcontentloaded", timeout: 30000 });
  if (!opts.basic) {
    await ready(page, "loginflow-signin");
    await signIn(page);
  }
  await ready(page, "loginflow-granted");
  report({ event: "check", name: "granted already" });

  // The flow to cancel.
  await page.goto(opts.cancelLogin, { waitUntil: "domcontentloaded", timeout: 30000 });
  if (!opts.basic) {
    await ready(page, "loginflow-signin");
    await signIn(page);
  }
  await ready(page, "loginflow-grant");
  await click(page, "#loginflow-cancel");
  await ready(page, "loginflow-cancelled");
  report({ event: "check", name: "cancelled" });

  // A link of no flow.
  await page.goto(opts.unknown, { waitUntil: "domcontentloaded", timeout: 30000 });
  await ready(page, "loginflow-gone");
  await expectText(page, "unknown or has expired");
  await shoot(page, "loginflow-gone");
  report({ event: "check", name: "unknown" });
  await browser.close();
});

// revoke opens the Devices and app passwords view (the provider's form
// first, if its session is gone) and revokes the password of label.
async function revoke(page, label) {
  await page.goto(`${opts.base}/#devices`, { waitUntil: "domcontentloaded", timeout: 30000 });
  if (!opts.basic) {
    const form = await Promise.race([
      page.waitForSelector("#username", { timeout: 30000 }),
      page.waitForSelector('body[data-ready="devices"]', { timeout: 30000 }).then(() => null),
    ]);
    if (form) {
      await page.type("#username", opts.user);
      await page.type("#password", opts.password);
      await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
    }
  }
  await ready(page, "devices");
  const row = `li.ap-item[data-label="${label.replace(/"/g, '\\"')}"]`;
  await click(page, `${row} .ap-revoke`);
  await page.waitForSelector("dialog[open]");
  const deleted = page.waitForResponse((res) => res.url().includes("/auth-app/tokens?token=") && res.request().method() === "DELETE");
  await click(page, "dialog[open] button[type=submit]");
  const res = await deleted;
  const at = Date.now();
  if (res.status() !== 200) {
    fail(`DELETE answered ${res.status()}`);
  }
  await page.waitForSelector(row, { hidden: true });
  report({ event: "revoked", at });
}

// signIn leaves the page for the provider: its form the first time, its
// session afterwards, back to the login URL signed in.
async function signIn(page) {
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), click(page, "#loginflow-signin")]);
  const form = await page.waitForSelector("#username", { timeout: 3000 }).catch(() => null);
  if (form) {
    await page.type("#username", opts.user);
    await page.type("#password", opts.password);
    await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
  }
}

async function expectText(page, want) {
  const text = await page.$eval("main", (m) => m.innerText);
  if (!text.includes(want)) {
    fail(`the page says ${JSON.stringify(text)}, not ${JSON.stringify(want)}`);
  }
}

async function shoot(page, name) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", phone]]) {
    await page.setViewport(viewport);
    const file = path.join(opts.artifacts, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: false });
    report({ event: "screenshot", file });
  }
  await page.setViewport(desktop);
}
