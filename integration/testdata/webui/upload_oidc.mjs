// An upload from the page signed in with OpenID Connect
// (TestWebUIUploadOIDC): the chunks go with the page's token. It prints
// one JSON event a line.
import path from "node:path";
import { launch, opts, ready, report, run, waitRow, waitUpload } from "./lib.mjs";

run(async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.goto(opts.base + opts.folder, { waitUntil: "domcontentloaded", timeout: 30000 });
    await page.waitForSelector("#username", { timeout: 30000 });
    await page.type("#username", opts.user);
    await page.type("#password", opts.password);
    await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
    await ready(page, "folder");
    const input = await page.waitForSelector('input[data-upload="files"]', { timeout: 10000 });
    await input.uploadFile(opts.file);
    const name = path.basename(opts.file);
    const done = await waitUpload(page, name, ["done"]);
    await waitRow(page, name);
    report({ event: "check", name: "uploaded with the token", sent: done.sessionBytes });
  } finally {
    await browser.close();
  }
});
