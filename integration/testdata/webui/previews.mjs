// Drives the page's previews and search with puppeteer-core, as
// integration/webui_previews_test.go asks: thumbnails in the listing for
// images only, asked for by the rows on screen only, the viewer's large
// preview, thumbnails on a public link's page, and the search box (or its
// absence when the server has no search); signed in with OpenID Connect
// (opts.issuer set), the thumbnails and the viewer only. Its one argument
// is JSON (see previewsOptions). It prints one JSON line per check and exits non-zero
// with the reason when one fails.
import path from "node:path";
import { click, clickLabel, desktop, fail, launch, open, opts, phone, ready, report, run, setViewport, waitRow } from "./lib.mjs";

const rowSel = (name) => `tbody tr[data-name="${name}"]`;

// shoot writes a screenshot at desktop and phone width once the previews
// on screen are settled (a phone's viewport loads the page anew).
async function shoot(page, name) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", phone]]) {
    await setViewport(page, viewport);
    await page.waitForFunction(() => [...document.querySelectorAll('.thumb[data-thumb="waiting"]')]
      .every((box) => box.getBoundingClientRect().top > innerHeight), { timeout: 20000 });
    const file = path.join(opts.artifacts, `${name}-${width}.png`);
    await page.screenshot({ path: file });
    report({ event: "screenshot", file });
  }
  await setViewport(page, desktop);
}

// shootSameLoad writes a screenshot at desktop and phone width without
// loading the page again (isMobile stays off), so that what is shown
// (search results) stays.
async function shootSameLoad(page, name) {
  for (const [width, viewport] of [["desktop", desktop], ["phone", { ...phone, isMobile: false, hasTouch: false }]]) {
    await page.setViewport(viewport);
    const file = path.join(opts.artifacts, `${name}-${width}.png`);
    await page.screenshot({ path: file });
    report({ event: "screenshot", file });
  }
  await page.setViewport(desktop);
}

// thumbnail waits until the row's thumbnail is settled and returns it:
// its state and the decoded image's natural size.
async function thumbnail(page, scope, name) {
  const sel = `${scope}[data-name="${name}"] .thumb:not([data-thumb="waiting"])`;
  await page.waitForSelector(sel, { timeout: 20000 });
  return page.$eval(sel, (box) => {
    const img = box.querySelector("img");
    return { state: box.dataset.thumb, width: img ? img.naturalWidth : 0, height: img ? img.naturalHeight : 0, complete: img ? img.complete : false };
  });
}

async function listing(page, { shots = true } = {}) {
  await open(page, opts.folder, "folder");
  for (const name of opts.images) {
    const t = await thumbnail(page, "tbody tr", name);
    if (t.state !== "shown" || !t.complete || t.width <= 0 || t.width > 36 || t.height > 36) {
      fail(`the thumbnail of ${name} is ${JSON.stringify(t)}`);
    }
    report({ event: "check", name: "thumbnail", file: name, ...t });
  }
  for (const name of opts.others) {
    await waitRow(page, name);
    const got = await page.$eval(rowSel(name), (tr) => ({ img: !!tr.querySelector("img"), icon: !!tr.querySelector(".col-name svg.icon"), thumb: tr.querySelector(".thumb")?.dataset.thumb || "" }));
    if (got.thumb === "waiting" || got.thumb === "shown") {
      // not-a-picture.png has a preview's name: its request is answered
      // 415, and its icon must stay.
      await page.waitForSelector(`${rowSel(name)} .thumb[data-thumb="none"]`, { timeout: 20000 });
    }
    const after = await page.$eval(rowSel(name), (tr) => ({ img: !!tr.querySelector("img"), icon: !!tr.querySelector(".col-name svg.icon") }));
    if (after.img || !after.icon) {
      fail(`${name} shows ${JSON.stringify(after)}, want its icon and no image`);
    }
    report({ event: "check", name: "no thumbnail", file: name });
  }
  if (shots) {
    await shoot(page, "previews-folder");
  }
}

// lazy opens the folder of many images: only the rows on screen ask for
// their previews, the last ones once scrolled to.
async function lazy(page) {
  const asked = new Set();
  const onRequest = (req) => {
    const u = new URL(req.url());
    if (u.searchParams.get("preview") === "1") {
      asked.add(decodeURIComponent(u.pathname.split("/").pop()));
    }
  };
  page.on("request", onRequest);
  await open(page, `${opts.folder}${opts.many}/`, "folder");
  const first = "tile-000.png";
  const last = `tile-${String(opts.manyCount - 1).padStart(3, "0")}.png`;
  await thumbnail(page, "tbody tr", first);
  // Give a page that would ask for everything the time to do so.
  await new Promise((r) => setTimeout(r, 1500));
  const before = asked.size;
  if (before === 0 || before >= opts.manyCount || asked.has(last)) {
    fail(`before scrolling ${before} of ${opts.manyCount} previews were asked for (the last: ${asked.has(last)})`);
  }
  await page.$eval(rowSel(last), (tr) => tr.scrollIntoView());
  const t = await thumbnail(page, "tbody tr", last);
  if (t.state !== "shown" || t.width <= 0) {
    fail(`the last tile's thumbnail after scrolling: ${JSON.stringify(t)}`);
  }
  page.off("request", onRequest);
  report({ event: "check", name: "lazy", askedBeforeScrolling: before, of: opts.manyCount, askedAfter: asked.size });
}

// viewer opens the photo's large preview and closes it with Escape.
async function viewer(page) {
  await open(page, opts.folder, "folder");
  await clickLabel(page, `View ${opts.photo}`);
  await page.waitForSelector('dialog.viewer .viewer-picture[data-state="shown"] img', { timeout: 30000 });
  const size = await page.$eval("dialog.viewer img", (img) => ({ width: img.naturalWidth, height: img.naturalHeight }));
  if (size.width !== opts.photoWidth) {
    fail(`the viewer's preview of ${opts.photo} is ${JSON.stringify(size)}, want ${opts.photoWidth} wide`);
  }
  report({ event: "check", name: "viewer", ...size });
  const file = path.join(opts.artifacts, `${opts.issuer ? "oidc-" : ""}previews-viewer-desktop.png`);
  await page.screenshot({ path: file });
  report({ event: "screenshot", file });
  await page.keyboard.press("Escape");
  await page.waitForSelector("dialog.viewer", { hidden: true, timeout: 10000 });
}

// search finds the hidden file, opens its folder, finds nothing for a
// name nobody gave, and clears with Escape. Without the server's search
// the box must be hidden.
async function search(page) {
  await open(page, opts.folder, "folder");
  const box = "form.search input[type=search]";
  const shown = await page.$eval("form.search", (f) => !f.hidden);
  if (!opts.search) {
    if (shown) {
      fail("the search box is shown though the server has no search");
    }
    report({ event: "check", name: "search hidden" });
    return;
  }
  if (!shown) {
    fail("the search box is hidden though the server searches");
  }
  const query = opts.hidden.slice(0, 4).toUpperCase();
  await page.locator(box).setTimeout(10000).fill(query);
  await page.keyboard.press("Enter");
  const item = `.search-results[data-state="results"] li[data-name="${opts.hidden}"]`;
  await page.waitForSelector(item, { timeout: 20000 });
  const where = await page.$eval(`${item} .search-where`, (a) => a.textContent);
  if (where !== `in ${opts.hiddenPath}`) {
    fail(`the result ${opts.hidden} is ${JSON.stringify(where)}, want in ${opts.hiddenPath}`);
  }
  if (await page.$eval("table.listing", (t) => !t.hidden)) {
    fail("the folder's table is shown beside the results");
  }
  report({ event: "check", name: "search found", query, where });
  await shootSameLoad(page, "previews-search");

  // More than a page: the first 100, then the rest.
  await page.locator(box).setTimeout(10000).fill("tile-");
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".search-list li").length === Math.min(n, 100), { timeout: 20000 }, opts.manyCount);
  const firstPage = await page.$eval(".search-results .count", (p) => p.textContent);
  if (firstPage !== `100 of ${opts.manyCount} results for “tile-”`) {
    fail(`the first page of results says ${JSON.stringify(firstPage)}`);
  }
  await click(page, ".search-results .more button:not([hidden])");
  await page.waitForFunction((n) => document.querySelectorAll(".search-list li").length === n, { timeout: 20000 }, opts.manyCount);
  const names = new Set(await page.$$eval(".search-list li", (lis) => lis.map((li) => li.dataset.name)));
  if (names.size !== opts.manyCount || !(await page.$eval(".search-results .more button", (b) => b.hidden))) {
    fail(`after "Show more": ${names.size} distinct results, want ${opts.manyCount} and no more button`);
  }
  report({ event: "check", name: "search paged", firstPage, results: names.size });

  await page.locator(box).setTimeout(10000).fill("no-such-name-anywhere");
  await page.keyboard.press("Enter");
  await page.waitForSelector('.search-results[data-state="empty"]', { timeout: 20000 });
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => document.querySelector(".search-results").hidden && !document.querySelector("table.listing").hidden, { timeout: 10000 });
  report({ event: "check", name: "search empty, then cleared" });

  await page.locator(box).setTimeout(10000).fill(query);
  await page.keyboard.press("Enter");
  await click(page, `${item} .search-where`);
  await ready(page, "folder");
  await waitRow(page, opts.hidden);
  report({ event: "check", name: "search result's folder opened" });
}

// publicLink opens the link's page in a context without sign-in: its
// image has a thumbnail too.
async function publicLink(browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport(desktop);
  await page.goto(opts.base + opts.link, { waitUntil: "domcontentloaded", timeout: 30000 });
  await ready(page, "public-folder");
  const t = await thumbnail(page, "tbody tr", opts.hidden);
  if (t.state !== "shown" || t.width <= 0) {
    fail(`the public page's thumbnail of ${opts.hidden}: ${JSON.stringify(t)}`);
  }
  report({ event: "check", name: "public thumbnail", ...t });
  const file = path.join(opts.artifacts, "previews-public-desktop.png");
  await page.screenshot({ path: file });
  report({ event: "screenshot", file });

  // A link to the photo alone: its page shows it large.
  await page.goto(opts.base + opts.fileLink, { waitUntil: "domcontentloaded", timeout: 30000 });
  await ready(page, "public-file");
  await page.waitForSelector('.public-file .viewer-picture[data-state="shown"] img', { timeout: 30000 });
  const width = await page.$eval(".public-file .viewer-picture img", (img) => img.naturalWidth);
  if (width !== opts.photoWidth) {
    fail(`the public file page's preview of ${opts.photo} is ${width} wide, want ${opts.photoWidth}`);
  }
  report({ event: "check", name: "public file preview", width });
  const fileShot = path.join(opts.artifacts, "previews-public-file-desktop.png");
  await page.screenshot({ path: fileShot });
  report({ event: "screenshot", file: fileShot });
  await context.close();
}

// signIn fills the test provider's form the page sent the browser to.
async function signIn(page) {
  await page.goto(opts.base + opts.folder, { waitUntil: "domcontentloaded", timeout: 30000 });
  await page.waitForSelector("#username", { timeout: 30000 });
  await page.type("#username", opts.user);
  await page.type("#password", opts.password);
  await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded", timeout: 30000 }), page.click("#submit")]);
  await ready(page, "folder");
}

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.setViewport(desktop);
    if (opts.issuer) {
      // No cookie and no Basic credentials: the previews come with the
      // token, through blob: URLs.
      await signIn(page);
      await listing(page, { shots: false });
      await viewer(page);
      return;
    }
    await page.authenticate({ username: opts.user, password: opts.password });
    await listing(page);
    await lazy(page);
    await viewer(page);
    await publicLink(browser);
    await search(page);
  } finally {
    await browser.close();
  }
}

run(main);
