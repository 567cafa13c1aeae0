// The page's row of scripts/bench -bigfile: davspaces' page in headless
// chromium uploads one file into a folder by its file picker (TUS, as a
// user would), with the setup of integration/testdata/webui. Its one
// argument is JSON: chromium, userDataDir, artifacts, base, user, password,
// folder, file, ignoreCertificateErrors, timeoutMs, serverPid. It prints
// {"event":"uploaded","ms":…,"cpuTicks":[…]}, the time from the pick to the
// upload's "done" and the server's CPU ticks at both, and exits non-zero
// with the reason when the upload fails.
import fs from "node:fs";
import path from "node:path";
import { desktop, fail, launch, open, opts, report, run, uploadLine, waitRow } from "../../integration/testdata/webui/lib.mjs";

// waitDone polls the upload's line every 100 ms: one long wait in the
// page would outlast puppeteer's protocol timeout of a command.
async function waitDone(page, name) {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const line = await uploadLine(page, name).catch(() => undefined);
    if (line && line.state === "done") {
      return line;
    }
    if (line && ["failed", "cancelled"].includes(line.state)) {
      fail(`${name}: ${line.state}: ${line.text}`);
    }
    if (Date.now() > deadline) {
      fail(`${name}: not done after ${opts.timeoutMs} ms: ${line ? line.text : "no upload line"}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// cpuTicks reads the CPU ticks (user + system) the server's process has
// used, as /proc/PID/stat counts them: the upload's share is what it used
// from the pick to "done", without the page's load and chromium's start
// before, which the wall time leaves out too.
function cpuTicks() {
  const stat = fs.readFileSync(`/proc/${opts.serverPid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    // The credentials go with every request, as a browser sends them once
    // its user signed in at the prompt: page.authenticate would intercept
    // every request, each PATCH's body included, through the protocol.
    const basic = Buffer.from(`${opts.user}:${opts.password}`).toString("base64");
    await page.setExtraHTTPHeaders({ Authorization: `Basic ${basic}` });
    await page.setViewport(desktop);
    await open(page, opts.folder, "folder");
    const input = await page.waitForSelector('input[data-upload="files"]', { timeout: 60000 });
    const name = path.basename(opts.file);
    const atPick = cpuTicks();
    const started = Date.now();
    await input.uploadFile(opts.file);
    const done = await waitDone(page, name);
    const ms = Date.now() - started;
    report({ event: "uploaded", ms, sent: done.sent, cpuTicks: [atPick, cpuTicks()] });
    await waitRow(page, name);
  } finally {
    await browser.close();
  }
}

run(main);
