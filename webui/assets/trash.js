// A space's trash, at its folder's URL with #trash: what was deleted,
// from where and when, with restore, delete permanently and empty.

import * as dav from "./dav.js";
import { folderURL, spaceTitle } from "./places.js";
import { actOn, ask, formatDate, formatItems, formatSize, h, icon, kindOf, showError } from "./ui.js";

/**
 * TrashView lists a space's trash in main with restore, purge and empty;
 * setCrumbs(items) sets the breadcrumbs.
 */
export class TrashView {
  constructor({ main, setCrumbs }, loc, drive) {
    this.main = main;
    this.setCrumbs = setCrumbs;
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
    this.setCrumbs([["Spaces", "/"], [spaceTitle(this.drive), `${this.loc.base}/`], ["Trash", "#trash"]]);
    const body = h("tbody", {}, this.items.length
      ? this.items.map((item) => this.row(item))
      : h("tr", { class: "empty" }, h("td", { colspan: "5" }, "The trash is empty.")));
    this.main.replaceChildren(
      h("div", { class: "heading" }, h("h1", {}, title), h("p", { class: "count" }, formatItems(this.items.length) + (this.more ? " shown" : ""))),
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

  act(work, done) {
    return actOn(this, work, done);
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
