// The page: the spaces overview at /, the user's app passwords at
// /#devices (devices.js), a folder's view at its WebDAV URL,
// the space's trash at the same URL with #trash, and a public link's page
// at /s/{token} (public.js). The server sends the same shell for each;
// <body data-view> says which it is.

import * as auth from "./auth.js";
import * as dav from "./dav.js";
import { setFavorite, showDetails } from "./details.js";
import * as devices from "./devices.js";
import { acceptDrops, askClash, pickFolder, place, startDrag, transfer } from "./picker.js";
import { isLoginFlow, showLoginFlow } from "./loginflow.js";
import { parsePublic, PublicView } from "./public.js";
import { searchable, SearchBox } from "./search.js";
import { mayShare, showShare } from "./share.js";
import { previewTypes, showViewer, Thumbnails } from "./thumbs.js";
import { ask, formatDate, formatSize, h, icon, kindOf, opensInline, showError, showStatus } from "./ui.js";
import { Uploads } from "./upload.js";

/** PAGE_ROWS is how many rows are added to the table at a time. */
const PAGE_ROWS = 200;

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
// The uploads outlive the views: they go on while the listing refreshes
// or the trash is shown; drops on the folder view are uploaded.
const uploads = new Uploads(main);

// A WebDAV base path: the personal space (/webdav, /dav/files/{user}) or
// any space by id (/dav/spaces/{id}), with or without /remote.php.
const basePattern = /^((?:\/remote\.php)?\/(?:webdav|dav\/files\/[^/]+|dav\/spaces\/[^/]+))(\/.*)?$/;

/** parseLocation splits a page's path into its base (as sent) and the decoded names below. */
function parseLocation(pathname) {
  const m = basePattern.exec(pathname);
  if (!m) {
    return null;
  }
  const segments = (m[2] || "").split("/").filter(Boolean).map(decodeURIComponent);
  return { base: m[1], segments };
}

// segmentsBelow are the decoded names of href below base, or below any
// WebDAV base path when href is not under base.
function segmentsBelow(base, href) {
  const path = href.startsWith(`${base}/`) ? href.slice(base.length) : (basePattern.exec(href) || [])[2] || "";
  return path.split("/").filter(Boolean).map(decodeURIComponent);
}

function folderURL(base, segments) {
  return segments.length ? `${base}/${dav.encodePath(segments)}/` : `${base}/`;
}

// spaceOf finds the Graph drive a base path names.
function spaceOf(drives, base) {
  const m = /\/dav\/spaces\/([^/]+)$/.exec(base);
  if (!m) {
    return drives.find((d) => d.driveType === "personal");
  }
  const id = decodeURIComponent(m[1]);
  return drives.find((d) => d.id === id);
}

function spaceTitle(drive) {
  if (!drive) {
    return "Space";
  }
  switch (drive.driveType) {
    case "personal":
      return "Personal";
    case "virtual":
      return "Shared with me";
  }
  return drive.name;
}

// allDrives are the user's spaces and the Shares drive, when the server
// has one.
async function allDrives() {
  const [spaces, shares] = await Promise.all([dav.drives(), dav.drives("virtual").catch(() => [])]);
  return [...spaces, ...shares];
}

// sharesCard is the overview's card of what others shared with the user.
function sharesCard(drive) {
  const href = `${new URL(drive.root.webDavUrl, location.origin).pathname}/`;
  return h("li", { class: "card" },
    h("a", { href, class: "card-link" }, icon("share"), h("span", { class: "card-name" }, spaceTitle(drive))),
    h("p", { class: "card-meta" }, "Files and folders others shared with you"));
}

function setCrumbs(items) {
  const list = h("ol", {});
  items.forEach(([label, href], i) => {
    const last = i === items.length - 1;
    list.append(h("li", {}, last ? h("span", { "aria-current": "page" }, label) : h("a", { href }, label)));
  });
  crumbs.replaceChildren(list);
}

// ---- Overview ----

function roleOf(drive, permissions) {
  if (drive.driveType === "personal") {
    return "Owner";
  }
  if (permissions.includes("P")) {
    return "Manager";
  }
  return /[WCK]/.test(permissions) ? "Editor" : "Viewer";
}

function quotaBar(quota) {
  const used = quota.used || 0;
  if (!quota.total) {
    return h("p", { class: "quota-text" }, `${formatSize(used)} used, no limit`);
  }
  const ratio = Math.min(1, used / quota.total);
  const fill = h("div", { class: `quota-fill${ratio >= 0.9 ? " full" : ""}` });
  fill.style.width = `${(ratio * 100).toFixed(1)}%`;
  return h("div", { class: "quota" },
    h("div", { class: "quota-track", role: "meter", "aria-valuemin": "0", "aria-valuemax": String(quota.total), "aria-valuenow": String(used), "aria-label": "Space used" }, fill),
    h("p", { class: "quota-text" }, `${formatSize(used)} of ${formatSize(quota.total)} used`));
}

async function showOverview() {
  document.title = "Your spaces · davspaces";
  setCrumbs([["Spaces", "/"]]);
  main.replaceChildren(h("h1", {}, "Your spaces"), h("p", { class: "loading" }, "Loading…"));
  const drives = await allDrives();
  const cards = await Promise.all(drives.map(async (drive) => {
    if (drive.driveType === "virtual") {
      return sharesCard(drive);
    }
    const href = `${new URL(drive.root.webDavUrl, location.origin).pathname}/`;
    const root = await dav.stat(href).catch(() => null);
    const role = root ? roleOf(drive, root.permissions) : "";
    const personal = drive.driveType === "personal";
    return h("li", { class: "card" },
      h("a", { href, class: "card-link" },
        icon(personal ? "person" : "space"),
        h("span", { class: "card-name" }, spaceTitle(drive))),
      h("p", { class: "card-meta" }, [personal ? "Personal space" : "Project space", role].filter(Boolean).join(" · ")),
      quotaBar(drive.quota || {}));
  }));
  main.replaceChildren(h("h1", {}, "Your spaces"), h("ul", { class: "cards" }, cards));
}

// ---- Folder ----

const sorters = {
  name: (a, b) => collator.compare(a.name, b.name),
  size: (a, b) => a.size - b.size,
  modified: (a, b) => (a.modified ? a.modified.getTime() : 0) - (b.modified ? b.modified.getTime() : 0),
};
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
const numberFormat = new Intl.NumberFormat();

function items(n) {
  return `${numberFormat.format(n)} ${n === 1 ? "item" : "items"}`;
}

// zipLink downloads a folder as a zip the server streams (GET <folder URL>?zip).
function zipLink(folderHref, name, cls, ...label) {
  const title = `Download ${name} as zip`;
  return h("a", { class: cls, href: `${folderHref}?zip`, download: `${name}.zip`, title, "aria-label": title, "data-zip": name }, icon("download"), ...label);
}

/** FolderView shows one folder's entries, a page of rows at a time. */
class FolderView {
  constructor(loc, drive, drives) {
    this.loc = loc;
    this.drive = drive;
    this.drives = drives;
    this.url = folderURL(loc.base, loc.segments);
    this.sort = { key: "name", ascending: true };
    this.filter = "";
    this.entries = [];
    this.visible = [];
    this.shown = 0;
  }

  get title() {
    return this.loc.segments.length ? this.loc.segments[this.loc.segments.length - 1] : spaceTitle(this.drive);
  }

  async load() {
    const [{ self, children }, types, search] = await Promise.all([dav.listFolder(this.url), previewTypes(), searchable()]);
    this.self = self;
    this.previewTypes = types;
    this.searchable = search;
    // A private link (/dav/spaces/{file id}/) names no space: the folder
    // tells which it is in.
    this.drive = this.drive || this.drives.find((d) => d.id === self.spaceId);
    this.entries = children;
    this.render();
  }

  // shares tells whether the folder is in the Shares drive, which has no
  // trash of its own (what is deleted there goes to its owner's).
  get shares() {
    return !!this.drive && this.drive.driveType === "virtual";
  }

  can(letter) {
    return this.self.permissions.includes(letter);
  }

  // canShare tells whether the user may share the folder's items: the
  // server gives R to those who may (editors, managers, a personal
  // space's owner).
  canShare() {
    return mayShare(this.self.permissions);
  }

  render() {
    document.title = `${this.title} · davspaces`;
    const { base, segments } = this.loc;
    setCrumbs([["Spaces", "/"], [spaceTitle(this.drive), `${base}/`],
      ...segments.map((name, i) => [name, folderURL(base, segments.slice(0, i + 1))])]);
    this.filterInput = h("input", { type: "search", class: "filter", placeholder: "Filter names", "aria-label": "Filter names", value: this.filter, oninput: (ev) => this.setFilter(ev.target.value) });
    const tools = h("div", { class: "tools" },
      this.can("C") && h("button", { type: "button", class: "primary", onclick: () => this.newFolder() }, icon("newFolder"), h("span", {}, "New folder")),
      this.can("C") && uploads.buttons(),
      zipLink(this.url, this.title, "button secondary", h("span", {}, "Download as zip")),
      !this.shares && h("a", { class: "button secondary", href: "#trash" }, icon("trash"), h("span", {}, "Trash")),
      this.filterInput);
    this.count = h("p", { class: "count", "aria-live": "polite" });
    this.body = h("tbody", {});
    // One button for the next rows, kept while they are added so that
    // the keyboard's focus stays on it; scrolling to it adds them as well.
    this.moreButton = h("button", { type: "button", class: "secondary", onclick: () => this.showMore() });
    this.more = h("div", { class: "more" }, this.moreButton);
    const table = h("table", { class: "listing" },
      h("thead", {}, h("tr", {},
        this.sortHeader("name", "Name", "col-name"),
        this.sortHeader("size", "Size", "col-size"),
        this.sortHeader("modified", "Modified", "col-date"),
        h("th", { class: "col-actions" }, h("span", { class: "visually-hidden" }, "Actions")))),
      this.body);
    this.table = table;
    main.replaceChildren(h("div", { class: "heading" }, h("h1", {}, this.title), this.count, this.searchBox().form), tools, this.search.results, table, this.more);
    this.acceptDropsOnCrumbs();
    uploads.showIn(this.can("C") ? this.url : null, () => this.load().catch(showError));
    this.observer = new IntersectionObserver((seen) => seen.some((e) => e.isIntersecting) && this.showMore());
    this.observer.observe(this.more);
    this.refresh();
  }

  sortHeader(key, label, cls) {
    const active = this.sort.key === key;
    const sort = active ? (this.sort.ascending ? "ascending" : "descending") : "none";
    return h("th", { class: cls, "aria-sort": sort },
      h("button", { type: "button", class: "sort", onclick: () => this.setSort(key) }, label, h("span", { class: "arrow", "aria-hidden": "true" }, active ? (this.sort.ascending ? "▲" : "▼") : "")));
  }

  setSort(key) {
    this.sort = { key, ascending: this.sort.key === key ? !this.sort.ascending : true };
    this.render();
    main.querySelector(`th[aria-sort="${this.sort.ascending ? "ascending" : "descending"}"] button`).focus();
  }

  setFilter(value) {
    this.filter = value;
    this.refresh();
  }

  // sorted returns the entries in the table's order, folders first; the
  // order is kept until the entries or the sort change, so that typing in
  // the filter only filters.
  sorted() {
    const key = `${this.sort.key}:${this.sort.ascending}`;
    if (this.sortedFor !== this.entries || this.sortedKey !== key) {
      const compare = sorters[this.sort.key];
      const direction = this.sort.ascending ? 1 : -1;
      this.sortedEntries = [...this.entries].sort((a, b) => (b.folder - a.folder) || direction * compare(a, b) || collator.compare(a.name, b.name));
      this.sortedFor = this.entries;
      this.sortedKey = key;
    }
    return this.sortedEntries;
  }

  // searchBox is the space's search box, hidden when the server has no
  // search; its results take the table's place while they are shown.
  searchBox() {
    if (this.thumbs) {
      this.thumbs.stop();
    }
    this.thumbs = new Thumbnails(this.previewTypes);
    const base = this.loc.base;
    this.search = new SearchBox({
      rootURL: `${base}/`,
      nameCell: (entry) => this.nameCell(entry),
      folderOf: (entry) => {
        const segments = segmentsBelow(base, entry.href).slice(0, -1);
        return [`/${segments.join("/")}`, folderURL(base, segments)];
      },
      onActive: (active) => {
        this.table.hidden = active;
        this.more.hidden = active;
      },
    });
    this.search.form.hidden = !this.searchable;
    return this.search;
  }

  // refresh filters the sorted entries and starts the table over.
  refresh() {
    this.thumbs.stop();
    const needle = this.filter.trim().toLocaleLowerCase();
    const sorted = this.sorted();
    this.visible = needle ? sorted.filter((e) => e.name.toLocaleLowerCase().includes(needle)) : sorted;
    performance.mark("listing-sorted");
    this.body.replaceChildren();
    this.shown = 0;
    const total = this.entries.length;
    this.count.textContent = needle ? `${numberFormat.format(this.visible.length)} of ${items(total)} match` : items(total);
    if (this.visible.length === 0) {
      this.body.append(h("tr", { class: "empty" }, h("td", { colspan: "4" }, needle ? "No names match the filter." : "This folder is empty.")));
    }
    this.showMore();
  }

  // showMore adds the next page of rows.
  showMore() {
    const next = this.visible.slice(this.shown, this.shown + PAGE_ROWS);
    this.body.append(...next.map((e) => this.row(e)));
    this.shown += next.length;
    const left = this.visible.length - this.shown;
    this.moreButton.hidden = left === 0;
    this.moreButton.textContent = `Show ${Math.min(left, PAGE_ROWS)} more (${numberFormat.format(left)} left)`;
  }

  // nameCell is an entry's icon and name, a link that opens it: a folder's
  // view, a file in a tab or as a download. A file with a preview has its
  // preview for an icon, a button that opens the viewer.
  nameCell(entry) {
    const href = entry.href;
    if (entry.folder) {
      return h("a", { href, class: "name" }, icon("folder"), h("span", {}, entry.name));
    }
    const opens = this.viewable(entry) ? { target: "_blank", rel: "noopener" } : { download: entry.name };
    if (!this.thumbs.has(entry)) {
      return h("a", { href, class: "name", ...opens }, icon(kindOf(entry)), h("span", {}, entry.name));
    }
    const view = `View ${entry.name}`;
    return h("div", { class: "name-line" },
      h("button", { type: "button", class: "plain thumb-button", title: view, "aria-label": view, onclick: () => this.view(entry, opens) }, this.thumbs.icon(entry, kindOf(entry))),
      h("a", { href, class: "name", ...opens }, h("span", {}, entry.name)));
  }

  // view shows entry's large preview, with its download and, for a type
  // the browser shows, its opening in a tab.
  view(entry, opens) {
    showViewer(entry, [
      opens.target && h("a", { class: "button secondary", href: entry.href, ...opens }, h("span", {}, "Open")),
      h("a", { class: "button primary", href: entry.href, download: entry.name }, icon("download"), h("span", {}, "Download")),
    ].filter(Boolean));
  }

  row(entry) {
    const href = entry.href;
    const link = this.nameCell(entry);
    const star = entry.favorite ? `Remove ${entry.name} from favourites` : `Add ${entry.name} to favourites`;
    const actions = h("td", { class: "col-actions" },
      h("button", { type: "button", class: `icon-only plain favorite${entry.favorite ? " on" : ""}`, "aria-pressed": String(entry.favorite), title: star, "aria-label": star, onclick: () => this.toggleFavorite(entry) }, icon(entry.favorite ? "starFilled" : "star")),
      h("button", { type: "button", class: "icon-only plain", title: `Details of ${entry.name}`, "aria-label": `Details of ${entry.name}`, onclick: () => showDetails(entry, () => this.load().catch(showError), { canShare: this.canShare() }) }, icon("info")),
      this.canShare() && h("button", { type: "button", class: "icon-only plain", "data-share": "", title: `Share ${entry.name}`, "aria-label": `Share ${entry.name}`, onclick: () => showShare(entry).catch(showError) }, icon("share")),
      !entry.folder && h("a", { class: "button icon-only plain", href, download: entry.name, title: `Download ${entry.name}`, "aria-label": `Download ${entry.name}` }, icon("download")),
      entry.folder && zipLink(entry.href, entry.name, "button icon-only plain"),
      this.can("C") && h("button", { type: "button", class: "icon-only plain", title: `Rename ${entry.name}`, "aria-label": `Rename ${entry.name}`, onclick: () => this.rename(entry) }, icon("rename")),
      h("button", { type: "button", class: "icon-only plain", title: `Move or copy ${entry.name}…`, "aria-label": `Move or copy ${entry.name}`, onclick: () => this.moveOrCopy(entry) }, icon("move")),
      this.can("C") && h("button", { type: "button", class: "icon-only plain", title: `Delete ${entry.name}`, "aria-label": `Delete ${entry.name}`, onclick: () => this.remove(entry) }, icon("trash")));
    const tr = h("tr", { "data-name": entry.name, draggable: "true", ondragstart: (ev) => this.drag(ev, entry), ondragend: () => { this.dragged = null; } },
      h("td", { class: "col-name" }, link),
      h("td", { class: "col-size" }, formatSize(entry.size)),
      h("td", { class: "col-date" }, formatDate(entry.modified)),
      actions);
    if (entry.folder) {
      acceptDrops(tr, () => this.dragged !== entry && this.dragged, (dragged, copy) => this.transfer(dragged, this.placeOf([...this.loc.segments, entry.name]), copy));
    }
    return tr;
  }

  // viewable tells whether entry's name opens it in a tab of its own: a
  // type the server shows inline, and a sign-in the new tab shares (a
  // token lives in this page only; with one, the name downloads).
  viewable(entry) {
    return opensInline(entry) && !auth.signedIn();
  }

  // ---- Move and copy (picker.js) ----

  placeOf(segments) {
    return place(this.loc.base, segments, this.drive && this.drive.id);
  }

  drag(ev, entry) {
    this.dragged = entry;
    startDrag(ev, entry);
  }

  // acceptDropsOnCrumbs lets rows be dropped on the folders above: the
  // crumbs' links after "Spaces" are the space's top and its folders.
  acceptDropsOnCrumbs() {
    crumbs.querySelectorAll("a").forEach((a, i) => {
      if (i > 0) {
        acceptDrops(a, () => this.dragged, (dragged, copy) => this.transfer(dragged, this.placeOf(this.loc.segments.slice(0, i - 1)), copy));
      }
    });
  }

  async moveOrCopy(entry) {
    const label = `Move or copy ${entry.name}`;
    const choice = await pickFolder(entry, this.placeOf(this.loc.segments));
    if (choice) {
      await this.transfer(entry, choice.to, choice.copy);
    }
    // The keyboard goes on from the row's button, or, when the row went
    // away with a move, from the table.
    const again = main.querySelector(`[aria-label="${CSS.escape(label)}"]`);
    (again || main).focus({ preventScroll: !again });
  }

  async transfer(entry, to, copy) {
    this.dragged = null;
    const where = to.segments.length ? `“${to.segments[to.segments.length - 1]}”` : "the top folder";
    try {
      const name = await transfer(entry, this.placeOf(this.loc.segments), to, copy, askClash);
      if (name === null) {
        return;
      }
      await this.load();
      showStatus(`${copy ? "Copied" : "Moved"} “${entry.name}” to ${where}${name !== entry.name ? ` as “${name}”` : ""}.`);
    } catch (err) {
      showError(err);
    }
  }

  async act(work, done) {
    try {
      await work();
      await this.load();
      showStatus(done);
    } catch (err) {
      showError(err);
    }
  }

  async toggleFavorite(entry) {
    const name = entry.favorite ? `“${entry.name}” is no longer a favourite.` : `“${entry.name}” is a favourite.`;
    await this.act(() => setFavorite(entry.href, !entry.favorite), name);
    const label = entry.favorite ? `Add ${entry.name} to favourites` : `Remove ${entry.name} from favourites`;
    const again = main.querySelector(`[aria-label="${CSS.escape(label)}"]`);
    if (again) {
      again.focus();
    }
  }

  async newFolder() {
    const name = await ask({ title: "New folder", label: "Name", value: "", confirm: "Create" });
    if (name) {
      await this.act(() => dav.makeFolder(this.url + encodeURIComponent(name)), `Folder “${name}” created.`);
    }
  }

  async rename(entry) {
    const name = await ask({ title: `Rename “${entry.name}”`, label: "New name", value: entry.name, confirm: "Rename" });
    if (name && name !== entry.name) {
      const to = this.url + encodeURIComponent(name) + (entry.folder ? "/" : "");
      await this.act(() => dav.move(entry.href, to, "rename it"), `Renamed to “${name}”.`);
    }
  }

  async remove(entry) {
    const ok = await ask({ title: `Delete “${entry.name}”?`, confirm: "Delete", danger: true });
    if (ok) {
      await this.act(() => dav.remove(entry.href, "delete it"), `“${entry.name}” was moved to the trash.`);
    }
  }
}

// ---- Trash ----

/** TrashView lists a space's trash with restore, purge and empty. */
class TrashView {
  constructor(loc, drive) {
    this.loc = loc;
    this.drive = drive;
  }

  async load() {
    if (!this.trashURL) {
      const root = await dav.stat(`${this.loc.base}/`);
      this.trashURL = `/dav/spaces/trash-bin/${encodeURIComponent(root.spaceId)}`;
    }
    ({ items: this.items, more: this.more } = await dav.listTrash(this.trashURL));
    this.render();
  }

  /** showMore appends the next page of the trash to the listing. */
  async showMore() {
    try {
      const { items, more } = await dav.listTrash(this.trashURL, { after: this.items[this.items.length - 1].key });
      this.items.push(...items);
      this.more = more;
      this.render();
    } catch (err) {
      showError(err);
    }
  }

  render() {
    const title = `Trash of ${spaceTitle(this.drive)}`;
    document.title = `${title} · davspaces`;
    setCrumbs([["Spaces", "/"], [spaceTitle(this.drive), `${this.loc.base}/`], ["Trash", "#trash"]]);
    const body = h("tbody", {}, this.items.length
      ? this.items.map((item) => this.row(item))
      : h("tr", { class: "empty" }, h("td", { colspan: "5" }, "The trash is empty.")));
    main.replaceChildren(
      h("div", { class: "heading" }, h("h1", {}, title), h("p", { class: "count" }, items(this.items.length) + (this.more ? " shown" : ""))),
      h("div", { class: "tools" },
        h("a", { class: "button secondary", href: folderURL(this.loc.base, this.loc.segments) }, icon("back"), h("span", {}, "Back to the files")),
        this.items.length > 0 && h("button", { type: "button", class: "danger", onclick: () => this.empty() }, icon("purge"), h("span", {}, "Empty the trash"))),
      h("table", { class: "listing trash" },
        h("thead", {}, h("tr", {},
          h("th", { class: "col-name" }, "Name"),
          h("th", { class: "col-location" }, "Was in"),
          h("th", { class: "col-date" }, "Deleted"),
          h("th", { class: "col-size" }, "Size"),
          h("th", { class: "col-actions" }, h("span", { class: "visually-hidden" }, "Actions")))),
        body),
      this.more && h("button", { type: "button", class: "secondary trash-more", onclick: () => this.showMore() }, "Show more"));
  }

  row(item) {
    const folder = item.location.includes("/") ? item.location.slice(0, item.location.lastIndexOf("/")) : "";
    return h("tr", { "data-name": item.name },
      h("td", { class: "col-name" }, h("span", { class: "name" }, icon(kindOf(item)), h("span", {}, item.name))),
      h("td", { class: "col-location" }, `/${folder}`),
      h("td", { class: "col-date" }, formatDate(item.deleted)),
      h("td", { class: "col-size" }, formatSize(item.size)),
      h("td", { class: "col-actions" },
        h("button", { type: "button", class: "icon-only plain", title: `Restore ${item.name}`, "aria-label": `Restore ${item.name}`, onclick: () => this.restore(item) }, icon("restore")),
        h("button", { type: "button", class: "icon-only plain", title: `Delete ${item.name} permanently`, "aria-label": `Delete ${item.name} permanently`, onclick: () => this.purge(item) }, icon("purge"))));
  }

  async act(work, done) {
    try {
      await work();
      await this.load();
      showStatus(done);
    } catch (err) {
      showError(err);
    }
  }

  restore(item) {
    const to = `${this.loc.base}/${dav.encodePath(item.location.split("/"))}${item.folder ? "/" : ""}`;
    return this.act(() => dav.move(item.href, to, `restore “${item.name}”`), `“${item.name}” is back in /${item.location}.`);
  }

  async purge(item) {
    const ok = await ask({ title: `Delete “${item.name}” permanently?`, confirm: "Delete permanently", danger: true });
    if (ok) {
      await this.act(() => dav.remove(item.href, `delete “${item.name}” permanently`), `“${item.name}” is deleted permanently.`);
    }
  }

  async empty() {
    const ok = await ask({ title: "Empty the trash?", confirm: "Empty the trash", danger: true });
    if (ok) {
      await this.act(() => dav.remove(this.trashURL, "empty the trash"), "The trash is empty.");
    }
  }
}

// ---- Not found ----

function showNotFound() {
  document.title = "Not found · davspaces";
  setCrumbs([["Spaces", "/"]]);
  main.replaceChildren(h("section", { class: "notfound" },
    h("h1", {}, "Not found"),
    h("p", {}, "There is nothing at this address that you can open."),
    h("a", { class: "button primary", href: "/" }, "Go to your spaces")));
}

// ---- Start ----

async function showFolderOrTrash() {
  const loc = parseLocation(location.pathname);
  if (!loc) {
    showNotFound();
    document.body.dataset.ready = "notfound";
    return;
  }
  const drives = await allDrives().catch(() => []);
  const drive = spaceOf(drives, loc.base);
  const view = location.hash === "#trash" ? new TrashView(loc, drive) : new FolderView(loc, drive, drives);
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
    showNotFound();
    document.body.dataset.ready = "notfound";
    return;
  }
  document.body.dataset.ready = location.hash === "#trash" ? "trash" : "folder";
}

// ---- A public link's page ----

// showPublic shows /s/{token}: no sign-in, and every request of the page
// from now on one of the link's (dav.usePublicLink).
async function showPublic() {
  dav.usePublicLink();
  uploads.showIn(null);
  const view = new PublicView({ main, setCrumbs, uploads });
  document.body.dataset.ready = await view.show();
}

// ---- Sign-in (OpenID Connect) ----

function showSignedOut() {
  document.title = "Signed out · davspaces";
  crumbs.replaceChildren();
  main.replaceChildren(h("section", { class: "notfound" },
    h("h1", {}, "You are signed out"),
    h("p", {}, "Sign in again to see your spaces."),
    h("button", { type: "button", class: "primary", onclick: () => auth.signInAgain().catch(showError) }, "Sign in")));
  document.body.dataset.ready = "signedout";
}

function showSignOut() {
  if (!auth.signedIn() || document.getElementById("signout")) {
    return;
  }
  document.querySelector("header.top").append(
    h("button", { type: "button", id: "signout", class: "secondary signout", onclick: () => auth.signOut().catch(showError) }, "Sign out"));
}

// ---- Navigation ----

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
    if (document.body.dataset.view === "public") {
      await showPublic();
      return;
    }
    if (document.body.dataset.view === "loginflow" && !auth.signedIn()) {
      // A client's login URL asks before it sends the browser to sign in.
      document.body.dataset.ready = await showLoginFlow(main);
      return;
    }
    if (await auth.start() === "signed-out") {
      showSignedOut();
      return;
    }
    if (auth.enabled) {
      // The server sent the same page for every path; the sign-in may
      // have come back to another one.
      document.body.dataset.view = viewOf(location.pathname);
    }
    shownPath = location.pathname;
    showSignOut();
    devices.addLink(document.body.dataset.view === "overview" && location.hash === devices.HASH);
    uploads.showIn(null); // until a folder view takes drops again
    switch (document.body.dataset.view) {
      case "overview":
        if (location.hash === devices.HASH) {
          await devices.show({ main, setCrumbs });
          document.body.dataset.ready = "devices";
          break;
        }
        await showOverview();
        document.body.dataset.ready = "overview";
        break;
      case "folder":
        await showFolderOrTrash();
        break;
      case "loginflow":
        document.body.dataset.ready = await showLoginFlow(main);
        break;
      default:
        showNotFound();
        document.body.dataset.ready = "notfound";
    }
  } catch (err) {
    main.replaceChildren(h("p", { class: "note error" }, err.message || String(err)));
    document.body.dataset.ready = "error";
  }
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
