// The search box of a folder's view: names found anywhere in the space
// (REPORT oc:search-files at the space's root), shown in place of the
// folder's table with the folder each is in. Enter searches, Escape clears.

import * as dav from "./dav.js";
import { h, icon } from "./ui.js";

const LIMIT = 100;

/** searchable tells whether the server answers REPORT oc:search-files. */
export async function searchable() {
  const reports = ((await dav.capabilities()).dav || {}).reports;
  return Array.isArray(reports) && reports.includes("search-files");
}

/**
 * SearchBox searches the space at rootURL. nameCell(entry) is an entry's
 * name as the table shows it, folderOf(entry) the [path, URL] of the
 * folder it is in, and onActive(active) is told when results replace the
 * table and when the table is back.
 */
export class SearchBox {
  constructor({ rootURL, nameCell, folderOf, onActive }) {
    this.rootURL = rootURL;
    this.nameCell = nameCell;
    this.folderOf = folderOf;
    this.onActive = onActive;
    this.input = h("input", { type: "search", placeholder: "Search this space", "aria-label": "Search this space", enterkeyhint: "search", onkeydown: (ev) => this.key(ev), oninput: () => this.input.value === "" && this.clear() });
    this.form = h("form", { class: "search", role: "search", onsubmit: (ev) => { ev.preventDefault(); this.run(); } }, icon("search"), this.input);
    this.results = h("section", { class: "search-results", "aria-live": "polite", hidden: true });
    this.asked = 0;
  }

  key(ev) {
    if (ev.key === "Escape") {
      ev.preventDefault();
      this.input.value = "";
      this.clear();
    }
  }

  clear() {
    this.asked++;
    this.results.hidden = true;
    this.results.replaceChildren();
    delete this.results.dataset.state;
    this.onActive(false);
  }

  async run() {
    const pattern = this.input.value.trim();
    if (!pattern) {
      this.clear();
      return;
    }
    const asked = ++this.asked;
    this.show("searching", h("p", { class: "loading" }, `Searching for “${pattern}”…`));
    const found = await this.page(asked, pattern, 0);
    if (!found) {
      return;
    }
    if (found.entries.length === 0) {
      this.show("empty", h("p", { class: "search-none" }, `Nothing in this space is named like “${pattern}”.`));
      return;
    }
    this.count = h("p", { class: "count" });
    this.list = h("ul", { class: "search-list" });
    this.moreButton = h("button", { type: "button", class: "secondary", onclick: () => this.more(asked, pattern) });
    this.show("results", this.count, this.list, h("div", { class: "more" }, this.moreButton));
    this.add(found, pattern);
  }

  // page fetches the results from offset; null when the search failed
  // (said in the results' place) or a newer search or a clear came first.
  async page(asked, pattern, offset) {
    let found = null;
    try {
      found = await dav.search(this.rootURL, pattern, { limit: LIMIT, offset });
    } catch (err) {
      if (asked === this.asked) {
        this.show("error", h("p", { class: "note error" }, err.message || String(err)));
      }
      return null;
    }
    return asked === this.asked ? found : null;
  }

  // more adds the next page of results.
  async more(asked, pattern) {
    this.moreButton.disabled = true;
    const found = await this.page(asked, pattern, this.list.childElementCount);
    if (found) {
      this.add(found, pattern);
    }
  }

  add({ entries, total }, pattern) {
    this.list.append(...entries.map((entry) => this.item(entry)));
    const shown = this.list.childElementCount;
    const of = total > shown ? `${shown} of ${total}` : String(shown);
    this.count.textContent = `${of} ${total === 1 ? "result" : "results"} for “${pattern}”`;
    this.moreButton.hidden = shown >= total || entries.length === 0;
    this.moreButton.disabled = false;
    this.moreButton.textContent = `Show ${Math.min(LIMIT, total - shown)} more`;
  }

  item(entry) {
    const [path, href] = this.folderOf(entry);
    return h("li", { "data-name": entry.name },
      this.nameCell(entry),
      h("a", { class: "search-where", href, title: `Open ${path}` }, `in ${path}`));
  }

  show(state, ...children) {
    this.results.replaceChildren(...children);
    this.results.dataset.state = state;
    this.results.hidden = false;
    this.onActive(true);
  }
}
