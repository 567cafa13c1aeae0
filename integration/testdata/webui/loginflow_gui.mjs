// The browser step of Nextcloud's Login Flow v2 for TestNextcloudDesktopGUI:
// the login URL the desktop client opened, the provider's form, the grant.
// It prints one JSON event a line.
import path from "node:path";
import { desktop, launch, opts, report, run } from "./lib.mjs";

run(async () => {
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewport(desktop);
  await page.goto(opts.loginURL, { waitUntil: "domcontentloaded", timeout: 30000 });
  await page.screenshot({ path: path.join(opts.artifacts, "loginflow-first.png") });
  report({ event: "page", url: page.url() });
  await browser.close();
});
