// A folder's view at its WebDAV URL: its entries sorted and filtered, a
// page of rows at a time, with the actions on each (favourite, details,
// share, download, rename, move or copy, delete), new folder, uploads,
// the folder as a zip and the space's search.

import * as auth from "./auth.js";
import * as dav from "./dav.js";
import { setFavorite, showDetails } from "./details.js";
import { acceptDrops, askClash, pickFolder, place, startDrag, transfer } from "./picker.js";
import { folderURL, segmentsBelow, spaceTitle } from "./places.js";
import { searchable, SearchBox } from "./search.js";
import { mayShare, showShare } from "./share.js";
import { previewTypes, showViewer, Thumbnails } from "./thumbs.js";
import { actOn, ask, formatDate, formatItems, formatSize, h, icon, kindOf, opensInline, showError, showStatus } from "./ui.js";

/** PAGE_ROWS is how many rows are added to the table at a time. */
const PAGE_ROWS = 200;

const sorters = {
  name: (a, b) => collator.compare(a.name, b.name),
  size: (a, b) => a.size - b.size,
  modified: (a, b) => (a.modified ? a.modified.getTime() : 0) - (b.modified ? b.modified.getTime() : 0),
};
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
const numberFormat = new Intl.NumberFormat();

// zipLink downloads a folder as a zip the server streams (GET <folder URL>?zip).
function zipLink(folderHref, name, cls, ...label) {
  const title = `Download ${name} as zip`;
  return h("a", { class: cls, href: `${folderHref}?zip`, download: `${name}.zip`, title, "aria-label": title, "data-zip": name }, icon("download"), ...label);
}

/**
 * FolderView shows one folder's entries in main, a page of rows at a time;
 * crumbs holds the breadcrumbs setCrumbs(items) sets, uploads is the
 * page's Uploads, which take the files dropped on the folder.
 */
export class FolderView {
  constructor({ main, crumbs, setCrumbs, uploads }, loc, drive, drives) {
    this.main = main;
    this.crumbs = crumbs;
    this.setCrumbs = setCrumbs;
    this.uploads = uploads;
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
    this.setCrumbs([["Spaces", "/"], [spaceTitle(this.drive), `${base}/`],
      ...segments.map((name, i) => [name, folderURL(base, segments.slice(0, i + 1))])]);
    this.filterInput = h("input", { type: "search", class: "filter", placeholder: "Filter names", "aria-label": "Filter names", value: this.filter, oninput: (ev) => this.setFilter(ev.target.value) });
    const tools = h("div", { class: "tools" },
      this.can("C") && h("button", { type: "button", class: "primary", onclick: () => this.newFolder() }, icon("newFolder"), h("span", {}, "New folder")),
      this.can("C") && this.uploads.buttons(),
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
    this.main.replaceChildren(h("div", { class: "heading" }, h("h1", {}, this.title), this.count, this.searchBox().form), tools, this.search.results, table, this.more);
    this.acceptDropsOnCrumbs();
    this.uploads.showIn(this.can("C") ? this.url : null, () => this.load().catch(showError));
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
    this.main.querySelector(`th[aria-sort="${this.sort.ascending ? "ascending" : "descending"}"] button`).focus();
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
    this.count.textContent = needle ? `${numberFormat.format(this.visible.length)} of ${formatItems(total)} match` : formatItems(total);
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
    this.crumbs.querySelectorAll("a").forEach((a, i) => {
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
    const again = this.main.querySelector(`[aria-label="${CSS.escape(label)}"]`);
    (again || this.main).focus({ preventScroll: !again });
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

  act(work, done) {
    return actOn(this, work, done);
  }

  async toggleFavorite(entry) {
    const name = entry.favorite ? `“${entry.name}” is no longer a favourite.` : `“${entry.name}” is a favourite.`;
    await this.act(() => setFavorite(entry.href, !entry.favorite), name);
    const label = entry.favorite ? `Add ${entry.name} to favourites` : `Remove ${entry.name} from favourites`;
    const again = this.main.querySelector(`[aria-label="${CSS.escape(label)}"]`);
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
