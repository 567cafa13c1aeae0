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
    let found;
    try {
      found = await dav.search(this.rootURL, pattern, { limit: LIMIT });
    } catch (err) {
      if (asked === this.asked) {
        this.show("error", h("p", { class: "note error" }, err.message || String(err)));
      }
      return;
    }
    if (asked !== this.asked) {
      return; // a newer search or a clear came first
    }
    if (found.length === 0) {
      this.show("empty", h("p", { class: "search-none" }, `Nothing in this space is named like “${pattern}”.`));
      return;
    }
    const more = found.length === LIMIT ? ` (the first ${LIMIT}; type more of the name to narrow it)` : "";
    this.show("results",
      h("p", { class: "count" }, `${found.length} ${found.length === 1 ? "result" : "results"} for “${pattern}”${more}`),
      h("ul", { class: "search-list" }, found.map((entry) => this.item(entry))));
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
