// A public link's page, /s/{token}[/path]: what the link gives, read
// through WebDAV at /dav/public-files/{token}[/path] with no user. A
// protected link asks for its password first (kept in dav.js's memory
// only, sent as Basic public:<password>); a folder is listed with its
// downloads (a file, a folder as a zip) and, when the link allows, uploads;
// a file drop shows an upload area alone. Every answer of "not there" reads
// the same, whatever the reason, as the server's 404 is the same.

import * as dav from "./dav.js";
import { largePreview, previewTypes, Thumbnails } from "./thumbs.js";
import { formatDate, formatSize, h, icon, kindOf, showError } from "./ui.js";

const linkProps = [
  ["d", "resourcetype"], ["oc", "size"], ["d", "getlastmodified"], ["oc", "permissions"], ["oc", "name"],
  ["oc", "public-link-permission"], ["oc", "public-link-item-type"], ["oc", "public-link-share-owner"],
  ["oc", "owner-display-name"], ["d", "getetag"],
];
const childProps = [["d", "resourcetype"], ["oc", "size"], ["d", "getlastmodified"], ["d", "getetag"]];

// The OCS permission bits a link's oc:public-link-permission carries.
const READ = 1;
const CREATE = 4;

/** parsePublic splits /s/{token}/a/b into the token and the decoded names below it. */
export function parsePublic(pathname) {
  const m = /^\/s\/([^/]+)(\/.*)?$/.exec(pathname);
  if (!m) {
    return null;
  }
  return { token: m[1], segments: (m[2] || "").split("/").filter(Boolean).map(decodeURIComponent) };
}

// rightsOf reads what a link lets anybody do from its root's properties:
// the OCS bits when the server sends them, else the oc:permissions letters.
function rightsOf(props) {
  const bits = Number(dav.text(props, "public-link-permission"));
  if (bits) {
    return { read: (bits & READ) !== 0, create: (bits & CREATE) !== 0 };
  }
  return { read: true, create: /[CK]/.test(dav.text(props, "permissions")) };
}

function isDenied(err) {
  return err instanceof dav.RequestError && err.status === 403;
}

function isMissing(err) {
  return err instanceof dav.RequestError && err.status === 404;
}

/**
 * PublicView shows one public link's page in main; setCrumbs(items) sets
 * the breadcrumbs, uploads is the page's Uploads.
 */
export class PublicView {
  constructor({ main, setCrumbs, uploads }) {
    this.main = main;
    this.setCrumbs = setCrumbs;
    this.uploads = uploads;
    this.loc = parsePublic(location.pathname);
    this.base = this.loc ? `/dav/public-files/${this.loc.token}` : "";
  }

  folderURL(segments) {
    return segments.length ? `${this.base}/${dav.encodePath(segments)}/` : `${this.base}/`;
  }

  pageURL(segments) {
    return segments.length ? `/s/${this.loc.token}/${dav.encodePath(segments)}/` : `/s/${this.loc.token}`;
  }

  /** show shows the page and resolves to its state (data-ready). */
  async show() {
    if (!this.loc) {
      return this.notFound();
    }
    this.main.replaceChildren(h("p", { class: "loading" }, "Loading…"));
    let root;
    try {
      root = await this.openRoot();
    } catch (err) {
      if (isMissing(err)) {
        return this.notFound();
      }
      if (isDenied(err)) {
        return this.showDrop(null); // a drop may not even be read
      }
      throw err;
    }
    this.name = dav.text(root.props, "name") || (dav.isCollection(root.props) ? "Shared folder" : "Shared file");
    this.thumbs = new Thumbnails(await previewTypes({ publicLink: true }));
    const rights = rightsOf(root.props);
    if (!rights.read && rights.create) {
      return this.showDrop(root);
    }
    if (!dav.isCollection(root.props)) {
      return this.showFile(root, this.base);
    }
    if (dav.text(root.props, "public-link-item-type") === "file") {
      // A file's link as oCIS has it: a folder holding the one file.
      const [, file] = await dav.propfind(`${this.base}/`, 1, childProps, "open the link");
      if (file) {
        this.name = dav.lastSegment(file.href);
        return this.showFile(file, file.href);
      }
    }
    return this.showFolder(rights);
  }

  // openRoot reads the link's root, asking for the password as long as the
  // server answers 401 (or 429: too many wrong ones).
  async openRoot() {
    for (;;) {
      try {
        // Without a slash: a file's link names the file itself.
        const [root] = await dav.propfind(this.base, 0, linkProps, "open the link");
        return root;
      } catch (err) {
        if (!(err instanceof dav.RequestError) || (err.status !== 401 && err.status !== 429)) {
          throw err;
        }
        dav.setLinkPassword(await this.askPassword(err));
      }
    }
  }

  // askPassword shows the password form and resolves with what is typed.
  askPassword(err) {
    document.title = "Protected link · davspaces";
    this.setCrumbs([]);
    let problem = "";
    if (err.status === 429) {
      const minutes = Math.max(1, Math.ceil(err.retryAfter / 60));
      problem = `Too many wrong passwords. Try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
    } else if (dav.hasLinkPassword()) {
      problem = "The password is wrong. Try again.";
    }
    return new Promise((resolve) => {
      const input = h("input", { type: "password", name: "password", required: true, autocomplete: "current-password", "aria-describedby": problem ? "password-problem" : null });
      const form = h("form", { class: "password-form" },
        h("h1", {}, "This link is protected"),
        h("p", {}, "Enter the password you were given with the link."),
        problem && h("p", { class: "note error", id: "password-problem", role: "alert" }, problem),
        h("label", {}, h("span", {}, "Password"), input),
        h("div", { class: "dialog-buttons" }, h("button", { type: "submit", class: "primary" }, "Open")));
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        if (input.value !== "") {
          form.querySelector("button[type=submit]").disabled = true;
          resolve(input.value);
        }
      });
      this.main.replaceChildren(h("section", { class: "public-password" }, form));
      document.body.dataset.ready = "public-password";
      input.focus();
    });
  }

  notFound() {
    document.title = "Link not found · davspaces";
    this.setCrumbs([]);
    this.main.replaceChildren(h("section", { class: "notfound" },
      h("h1", {}, "This link does not exist or has expired"),
      h("p", {}, "Ask the person who sent it to you for a new one.")));
    return "public-notfound";
  }

  // ---- A file drop ----

  showDrop(root) {
    const owner = root ? dav.text(root.props, "public-link-share-owner") || dav.text(root.props, "owner-display-name") : "";
    const name = root ? dav.text(root.props, "name") : "";
    document.title = `${name || "File drop"} · davspaces`;
    this.setCrumbs([]);
    const url = `${this.base}/`;
    this.uploads.showIn(url);
    this.main.replaceChildren(h("section", { class: "drop-area" },
      icon("upload"),
      h("h1", {}, name ? `Send files to “${name}”` : "Send files"),
      h("p", {}, `Files you drop here are sent to ${owner || "the person who shared this link"}; you cannot see what is there.`),
      h("div", { class: "tools" }, this.uploads.buttons({ folders: false }))));
    return "public-drop";
  }

  // ---- A file ----

  showFile(root, url) {
    document.title = `${this.name} · davspaces`;
    this.setCrumbs([[this.name, this.pageURL([])]]);
    const entry = { name: this.name, folder: false, href: url, etag: dav.text(root.props, "getetag") };
    const modified = dav.text(root.props, "getlastmodified");
    this.main.replaceChildren(h("section", { class: "public-file" },
      h("div", { class: "heading" }, h("h1", {}, h("span", { class: "name" }, icon(kindOf(entry)), h("span", {}, this.name)))),
      h("p", { class: "count" }, [formatSize(Number(dav.text(root.props, "size") || 0)), modified && formatDate(new Date(modified))].filter(Boolean).join(" · ")),
      h("div", { class: "tools" }, this.downloadLink(url, this.name, "button primary", icon("download"), h("span", {}, "Download"))),
      this.thumbs.has(entry) && largePreview(entry)));
    return "public-file";
  }

  // ---- A folder ----

  async showFolder(rights) {
    const segments = this.loc.segments;
    const url = this.folderURL(segments);
    let listing;
    try {
      listing = await dav.propfind(url, 1, childProps, "open the folder");
    } catch (err) {
      if (isDenied(err) && segments.length === 0) {
        return this.showDrop(null);
      }
      if (isMissing(err)) {
        return this.notFound();
      }
      throw err;
    }
    const title = segments.length ? segments[segments.length - 1] : this.name;
    document.title = `${title} · davspaces`;
    this.setCrumbs([[this.name, this.pageURL([])], ...segments.map((s, i) => [s, this.pageURL(segments.slice(0, i + 1))])]);
    const entries = listing.slice(1).map(({ href, props }) => ({
      href,
      name: dav.lastSegment(href),
      folder: dav.isCollection(props),
      size: Number(dav.text(props, "size") || 0),
      modified: dav.text(props, "getlastmodified") ? new Date(dav.text(props, "getlastmodified")) : null,
      etag: dav.text(props, "getetag"),
    }));
    entries.sort((a, b) => (b.folder - a.folder) || collator.compare(a.name, b.name));
    this.thumbs.stop();
    const body = h("tbody", {}, entries.length
      ? entries.map((e) => this.row(e, segments))
      : h("tr", { class: "empty" }, h("td", { colspan: "4" }, "This folder is empty.")));
    this.main.replaceChildren(
      h("div", { class: "heading" }, h("h1", {}, title), h("p", { class: "count" }, `${entries.length} ${entries.length === 1 ? "item" : "items"}`)),
      h("div", { class: "tools" },
        rights.create && this.uploads.buttons(),
        this.zipLink(url, title, "button secondary", h("span", {}, "Download as zip"))),
      h("table", { class: "listing public-listing" },
        h("thead", {}, h("tr", {},
          h("th", { class: "col-name" }, "Name"),
          h("th", { class: "col-size" }, "Size"),
          h("th", { class: "col-date" }, "Modified"),
          h("th", { class: "col-actions" }, h("span", { class: "visually-hidden" }, "Actions")))),
        body));
    this.uploads.showIn(rights.create ? url : null, () => this.showFolder(rights).catch(showError));
    return "public-folder";
  }

  row(entry, segments) {
    const link = entry.folder
      ? h("a", { href: this.pageURL([...segments, entry.name]), class: "name" }, icon("folder"), h("span", {}, entry.name))
      : this.downloadLink(entry.href, entry.name, "name", this.thumbs.icon(entry, kindOf(entry)), h("span", {}, entry.name));
    const label = entry.folder ? `Download ${entry.name} as zip` : `Download ${entry.name}`;
    return h("tr", { "data-name": entry.name },
      h("td", { class: "col-name" }, link),
      h("td", { class: "col-size" }, formatSize(entry.size)),
      h("td", { class: "col-date" }, formatDate(entry.modified)),
      h("td", { class: "col-actions" }, entry.folder
        ? this.zipLink(entry.href, entry.name, "button icon-only plain")
        : this.downloadLink(entry.href, entry.name, "button icon-only plain", icon("download"), { title: label, "aria-label": label })));
  }

  zipLink(folderURL, name, cls, ...label) {
    const title = `Download ${name} as zip`;
    return this.downloadLink(`${folderURL}?zip`, `${name}.zip`, cls, icon("download"), ...label, { title, "aria-label": title, "data-zip": name });
  }

  // downloadLink is a link that saves url as name: a plain download
  // without a password; with one the request must carry it, so the file
  // comes through send (held in the browser's memory until it is saved).
  downloadLink(url, name, cls, ...children) {
    const attrs = children.find((c) => c && !(c instanceof Node)) || {};
    const content = children.filter((c) => c instanceof Node);
    const onclick = (ev) => {
      if (dav.hasLinkPassword()) {
        ev.preventDefault();
        dav.saveAs(url, name).catch(showError);
      }
    };
    return h("a", { class: cls, href: url, download: name, onclick, ...attrs }, ...content);
  }
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
