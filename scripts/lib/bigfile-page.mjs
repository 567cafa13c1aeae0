// The page's row of scripts/bench -bigfile: davspaces' page in headless
// chromium uploads one file into a folder by its file picker (TUS, as a
// user would), with the setup of integration/testdata/webui. Its one
// argument is JSON: chromium, userDataDir, artifacts, base, user, password,
// folder, file, ignoreCertificateErrors, timeoutMs. It prints
// {"event":"uploaded","ms":…}, the time from the pick to the upload's
// "done", and exits non-zero with the reason when the upload fails.
import path from "node:path";
import { desktop, launch, open, opts, report, run, waitRow, waitUpload } from "../../integration/testdata/webui/lib.mjs";

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.authenticate({ username: opts.user, password: opts.password });
    await page.setViewport(desktop);
    await open(page, opts.folder, "folder");
    const input = await page.waitForSelector('input[data-upload="files"]', { timeout: 60000 });
    const name = path.basename(opts.file);
    const started = Date.now();
    await input.uploadFile(opts.file);
    const done = await waitUpload(page, name, ["done"], opts.timeoutMs);
    const ms = Date.now() - started;
    report({ event: "uploaded", ms, sent: done.sent });
    await waitRow(page, name);
  } finally {
    await browser.close();
  }
}

run(main);
