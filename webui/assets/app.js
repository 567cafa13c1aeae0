// The page's router: the spaces overview at / (overview.js), the user's
// app passwords at /#devices (devices.js), a folder's view at its WebDAV
// URL (folder.js), the space's trash at the same URL with #trash
// (trash.js), a public link's page at /s/{token} (public.js) and a
// client's login URL (loginflow.js). The server sends the same shell for
// each; <body data-view> says which it is, and <body data-ready> which
// view is shown once it is.

import * as auth from "./auth.js";
import * as dav from "./dav.js";
import * as devices from "./devices.js";
import { FolderView } from "./folder.js";
import { isLoginFlow, showLoginFlow } from "./loginflow.js";
import * as massDelete from "./massdelete.js";
import * as notFound from "./notfound.js";
import * as overview from "./overview.js";
import { parseLocation, spaceOf } from "./places.js";
import { parsePublic, PublicView } from "./public.js";
import { addSignOut, showSignedOut } from "./session.js";
import { TrashView } from "./trash.js";
import { h, showError } from "./ui.js";
import { Uploads } from "./upload.js";

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");

// page is what every view is given: main for its content, the header's
// crumbs and setCrumbs, and the uploads, which outlive the views: they go
// on while the listing refreshes or the trash is shown; drops on the
// folder view are uploaded.
const page = { main, crumbs, setCrumbs, uploads: new Uploads(main) };

function setCrumbs(items) {
  const list = h("ol", {});
  items.forEach(([label, href], i) => {
    const last = i === items.length - 1;
    list.append(h("li", {}, last ? h("span", { "aria-current": "page" }, label) : h("a", { href }, label)));
  });
  crumbs.replaceChildren(list);
}

// banners are notices over the signed-in views, not of any one view: each
// is a module's show(page, ready), called once a view is shown with its
// state ("overview", "folder", "trash", ...), before data-ready is set. A
// banner module hooks in by being added here.
const banners = [massDelete];

async function showBanners(ready) {
  await Promise.all(banners.map((banner) => banner.show(page, ready)));
}

// showFolderOrTrash shows a folder's view or, with #trash, its space's
// trash, and resolves to its state.
async function showFolderOrTrash() {
  const loc = parseLocation(location.pathname);
  if (!loc) {
    return notFound.show(page);
  }
  const drives = await dav.allDrives().catch(() => []);
  const drive = spaceOf(drives, loc.base);
  const trash = location.hash === "#trash";
  const view = trash ? new TrashView(page, loc, drive) : new FolderView(page, loc, drive, drives);
  main.replaceChildren(h("p", { class: "loading" }, "Loading…"));
  try {
    await view.load();
  } catch (err) {
    // Signed in with a token the server sent the same page for every
    // path; this is where a folder that is not there (or not the user's)
    // turns out so, with the same words as the server's "not found".
    if (err.status !== 404) {
      throw err;
    }
    return notFound.show(page);
  }
  return trash ? "trash" : "folder";
}

// showPublic shows /s/{token}: no sign-in, and every request of the page
// from now on one of the link's (dav.usePublicLink).
async function showPublic() {
  dav.usePublicLink();
  page.uploads.showIn(null);
  return new PublicView(page).show();
}

// viewOf is the view of a path, as the server would name it.
function viewOf(pathname) {
  if (pathname === "/") {
    return "overview";
  }
  if (isLoginFlow(pathname)) {
    return "loginflow";
  }
  if (parsePublic(pathname)) {
    return "public";
  }
  return parseLocation(pathname) ? "folder" : "notfound";
}

// navigate shows the page at url without loading it again: the token of an
// OpenID Connect sign-in lives in this page only.
function navigate(url) {
  history.pushState(null, "", url);
  render();
  // As after a page load: the keyboard starts at the content.
  window.scrollTo(0, 0);
  main.focus({ preventScroll: true });
}

function render() {
  document.body.dataset.view = viewOf(location.pathname);
  delete document.body.dataset.ready;
  start();
}

// shownPath is the path of the view on screen; a change of the hash alone
// is the hashchange's.
let shownPath = location.pathname;

// followLink takes over a click on a link to one of the page's views, and,
// signed in with a token, on a download link.
function followLink(ev) {
  const link = ev.target instanceof Element && ev.target.closest("a[href]");
  if (!link || ev.defaultPrevented || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey || link.target) {
    return;
  }
  const url = new URL(link.href);
  if (url.origin !== location.origin || url.protocol !== location.protocol) {
    return;
  }
  if (link.hasAttribute("download")) {
    if (auth.signedIn()) {
      ev.preventDefault();
      dav.saveAs(url.pathname + url.search, link.getAttribute("download")).catch(showError);
    }
    return;
  }
  const samePage = url.pathname === location.pathname && url.search === location.search;
  if ((samePage && url.hash) || viewOf(url.pathname) === "notfound") {
    return; // #trash is the hashchange's
  }
  // A public link's page and the signed-in pages do not share a load: the
  // one sends no credentials, the other must sign in.
  if ((viewOf(url.pathname) === "public") !== (document.body.dataset.view === "public")) {
    return;
  }
  ev.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}

document.addEventListener("click", followLink);
window.addEventListener("popstate", () => location.pathname !== shownPath && render());

async function start() {
  try {
    document.body.dataset.ready = await show();
  } catch (err) {
    main.replaceChildren(h("p", { class: "note error" }, err.message || String(err)));
    document.body.dataset.ready = "error";
  }
}

// show shows the view of the page's URL and resolves to its state, which
// start sets on <body data-ready> for the tests and the banners.
async function show() {
  if (document.body.dataset.view === "public") {
    return showPublic();
  }
  if (document.body.dataset.view === "loginflow" && !auth.signedIn()) {
    // A client's login URL asks before it sends the browser to sign in.
    return showLoginFlow(main);
  }
  if (await auth.start() === "signed-out") {
    return showSignedOut(page);
  }
  if (auth.enabled) {
    // The server sent the same page for every path; the sign-in may
    // have come back to another one.
    document.body.dataset.view = viewOf(location.pathname);
  }
  shownPath = location.pathname;
  addSignOut();
  devices.addLink(document.body.dataset.view === "overview" && location.hash === devices.HASH);
  page.uploads.showIn(null); // until a folder view takes drops again
  const ready = await showSignedIn();
  await showBanners(ready);
  return ready;
}

// showSignedIn shows the view of a signed-in page.
async function showSignedIn() {
  switch (document.body.dataset.view) {
    case "overview":
      if (location.hash === devices.HASH) {
        await devices.show(page);
        return "devices";
      }
      await overview.show(page);
      return "overview";
    case "folder":
      return showFolderOrTrash();
    case "loginflow":
      return showLoginFlow(main);
  }
  return notFound.show(page);
}

window.addEventListener("hashchange", () => {
  if (["folder", "overview"].includes(document.body.dataset.view)) {
    delete document.body.dataset.ready;
    start();
  }
});

document.addEventListener("keydown", (ev) => {
  const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement;
  if (ev.key === "/" && !typing && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
    const filter = main.querySelector("input.filter");
    if (filter) {
      ev.preventDefault();
      filter.focus();
    }
  }
});

start();
