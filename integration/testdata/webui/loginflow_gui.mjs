// The browser step of TestNextcloudDesktopGUI: the login URL that the real
// Nextcloud desktop client opened, the page's "Sign in", the provider's
// form, and "Grant access" for the client the page names. It prints one
// JSON event a line.
import path from "node:path";
import { click, desktop, fail, launch, opts, ready, report, run } from "./lib.mjs";

run(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewport(desktop);
  // Caddy's local CA signs the server's certificate: the test trusts it
  // as the client's dialog did.
  const cdp = await page.createCDPSession();
  await cdp.send("Security.setIgnoreCertificateErrors", { ignore: true });
  await page.goto(opts.loginURL, { waitUntil: "domcontentloaded", timeout: 30000 });
  await ready(page, "loginflow-signin");
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), click(page, "#loginflow-signin")]);
  await page.waitForSelector("#username", { timeout: 30000 });
  await page.type("#username", opts.user);
  await page.type("#password", opts.password);
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);

  await ready(page, "loginflow-grant");
  const client = await page.$eval(".loginflow-client", (el) => el.textContent);
  const account = await page.$eval(".loginflow-account", (el) => el.textContent);
  if (!client.includes("Desktop Client") || !account.includes(opts.user)) {
    fail(`the page asks for ${JSON.stringify(client)} on ${JSON.stringify(account)}`);
  }
  await shoot(page, "grant");
  await click(page, "#loginflow-grant");
  await ready(page, "loginflow-granted");
  await shoot(page, "granted");
  report({ event: "granted", client, account });
  await browser.close();
});

async function shoot(page, name) {
  const file = path.join(opts.artifacts, `nextcloud-gui-browser-${name}.png`);
  await page.screenshot({ path: file });
  report({ event: "screenshot", file });
}
