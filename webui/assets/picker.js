// Move and copy: a dialog that picks a folder (in this space or another
// of the user's spaces) and the transfer itself, which drag & drop of a
// row onto a folder uses as well. Within a space the server moves and
// copies (MOVE/COPY, Overwrite: F); it does not between spaces, so a
// file goes there as a download and an upload (and, for a move, is
// deleted here once it arrived); a folder cannot go to another space.

import * as dav from "./dav.js";
import { h, icon } from "./ui.js";

/** A place to put things: a space's WebDAV base, the folder's names below it, the space's id. */
export function place(base, segments, spaceId) {
  return { base, segments, spaceId };
}

/** placeURL is the folder's URL, ending in a slash. */
export function placeURL(p) {
  return p.segments.length ? `${p.base}/${dav.encodePath(p.segments)}/` : `${p.base}/`;
}

const folderProps = [["d", "resourcetype"]];

/** listFolders returns the names of the folders in the folder at url. */
async function listFolders(url) {
  const [, ...children] = await dav.propfind(url, 1, folderProps, "list the folders");
  return children.filter(({ props }) => dav.isCollection(props)).map(({ href }) => dav.lastSegment(href));
}

function driveBase(drive) {
  return new URL(drive.root.webDavUrl, location.origin).pathname.replace(/\/+$/, "");
}

function driveTitle(drive) {
  return drive.driveType === "personal" ? "Personal" : drive.name;
}

/**
 * pickFolder opens the folder picker for entry, starting at from, and
 * resolves with { to, copy } or null when cancelled. Escape cancels.
 */
export function pickFolder(entry, from) {
  return new Promise((resolve) => {
    const picker = new Picker(entry, from, resolve);
    picker.open();
  });
}

/**
 * chooseFolder opens the picker in the space of from (it stays there),
 * titled title, to choose a folder: resolves with its place, or null when
 * cancelled.
 */
export function chooseFolder(title, from) {
  return new Promise((resolve) => {
    const picker = new Picker(null, from, resolve, title);
    picker.open();
  });
}

// Picker moves or copies entry, or, without one, chooses a folder.
class Picker {
  constructor(entry, from, resolve, title) {
    this.entry = entry;
    this.at = from;
    this.resolve = resolve;
    this.title = title || `Move or copy “${entry.name}”`;
    this.drives = [];
  }

  open() {
    const title = this.title;
    this.spaces = h("select", { "aria-label": "Space", onchange: (ev) => this.toSpace(ev.target.value) });
    this.crumbs = h("ol", { class: "picker-crumbs", "aria-label": "Folder" });
    this.list = h("ul", { class: "picker-list", "aria-live": "polite" });
    this.moveButton = h("button", { type: "button", class: "primary", onclick: () => this.finish({ to: this.at, copy: false }) }, "Move here");
    this.copyButton = h("button", { type: "button", class: "secondary", onclick: () => this.finish({ to: this.at, copy: true }) }, "Copy here");
    const actions = this.entry
      ? [this.copyButton, this.moveButton]
      : [h("button", { type: "button", class: "primary", onclick: () => this.finish(this.at) }, "Choose this folder")];
    this.dialog = h("dialog", { class: "picker", "aria-label": title },
      h("h2", {}, title),
      this.entry && h("label", { class: "picker-space" }, h("span", {}, "Space"), this.spaces),
      h("nav", {}, this.crumbs),
      this.list,
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: () => this.finish(null) }, "Cancel"),
        ...actions));
    this.dialog.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      this.finish(null);
    });
    document.body.append(this.dialog);
    this.dialog.showModal();
    this.show();
    if (this.entry) {
      this.loadSpaces();
    }
  }

  finish(result) {
    if (this.done) {
      return;
    }
    this.done = true;
    this.dialog.close();
    this.dialog.remove();
    this.resolve(result);
  }

  // loadSpaces fills the space menu with the user's spaces; the current
  // one is selected (or a placeholder for it, if Graph does not list it).
  async loadSpaces() {
    this.drives = await dav.drives().catch(() => []);
    const options = this.drives.map((d) => h("option", { value: d.id }, driveTitle(d)));
    if (!this.drives.some((d) => d.id === this.at.spaceId)) {
      options.unshift(h("option", { value: "" }, "This space"));
    }
    this.spaces.replaceChildren(...options);
    this.spaces.value = this.at.spaceId || "";
  }

  toSpace(id) {
    const drive = this.drives.find((d) => d.id === id);
    if (drive) {
      this.at = place(driveBase(drive), [], drive.id);
      this.show();
    }
  }

  go(segments) {
    this.at = place(this.at.base, segments, this.at.spaceId);
    this.show();
  }

  // show lists the folders where the picker is; a folder cannot go into
  // itself, so the entry's own folder is not offered.
  async show() {
    const { segments } = this.at;
    const levels = [["Top", []], ...segments.map((name, i) => [name, segments.slice(0, i + 1)])];
    this.crumbs.replaceChildren(...levels.map(([label, to], i) => h("li", {}, i === levels.length - 1
      ? h("span", { "aria-current": "location" }, label)
      : h("button", { type: "button", class: "plain", onclick: () => this.go(to) }, label))));
    this.list.replaceChildren(h("li", { class: "picker-note" }, "Loading…"));
    const url = placeURL(this.at);
    const into = !!this.entry && this.entry.folder && url.startsWith(this.entry.href);
    this.moveButton.disabled = this.copyButton.disabled = into;
    let names;
    try {
      names = await listFolders(url);
    } catch (err) {
      this.list.replaceChildren(h("li", { class: "picker-note error" }, err.message));
      return;
    }
    if (placeURL(this.at) !== url) {
      return; // the person went elsewhere meanwhile
    }
    names.sort((a, b) => a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" }));
    const items = names.map((name) => {
      const target = url + encodeURIComponent(name) + "/";
      const self = !!this.entry && this.entry.folder && target === this.entry.href;
      return h("li", {}, h("button", { type: "button", class: "plain picker-folder", disabled: self, onclick: () => this.go([...segments, name]) },
        icon("folder"), h("span", {}, name), self ? h("span", { class: "picker-self" }, "(itself)") : null));
    });
    this.list.replaceChildren(...(items.length ? items : [h("li", { class: "picker-note" }, "No folders here.")]));
  }
}

/**
 * transfer moves or copies entry (from the place from) into the folder
 * to, asking resolve how to settle a name that is taken there. It
 * resolves with the name the entry has there, or null when the person
 * gave up.
 */
export async function transfer(entry, from, to, copy, resolveClash) {
  const action = `${copy ? "copy" : "move"} “${entry.name}”`;
  const sameSpace = from.spaceId === to.spaceId || from.base === to.base;
  if (!sameSpace && entry.folder) {
    throw new Error(`Could not ${action}: folders cannot go to another space. Download it as a zip and upload it there, or move its files one by one.`);
  }
  const put = sameSpace
    ? (name, overwrite) => serverTransfer(entry, targetURL(to, name, entry.folder), copy, overwrite, action)
    : (name, overwrite) => uploadThere(entry, targetURL(to, name, false), overwrite, action);
  let name = entry.name;
  if (sameSpace && from.segments.join("/") === to.segments.join("/")) {
    if (!copy) {
      throw new Error(`Could not ${action}: it is in that folder already.`);
    }
    // A copy beside itself gets a number, as file managers do.
    return keepBoth(entry.name, (n) => put(n, false));
  }
  try {
    await put(name, false);
  } catch (err) {
    if (err.status === 409 && entry.folder && sameSpace) {
      throw new Error(`Could not ${action}: a folder cannot go into itself or one of its folders.`);
    }
    if (err.status !== 412) {
      throw err;
    }
    const choice = await resolveClash(entry.name);
    if (!choice) {
      return null;
    }
    name = choice === "replace" ? entry.name : await keepBoth(entry.name, (n) => put(n, false));
    if (choice === "replace") {
      await put(name, true);
    }
  }
  if (!copy && !sameSpace) {
    await dav.remove(entry.href, `remove “${entry.name}” here after it arrived in the other space`);
  }
  return name;
}

function targetURL(to, name, folder) {
  return placeURL(to) + encodeURIComponent(name) + (folder ? "/" : "");
}

function serverTransfer(entry, url, copy, overwrite, action) {
  return dav.send(copy ? "COPY" : "MOVE", entry.href, {
    headers: { Destination: dav.destination(url), Overwrite: overwrite ? "T" : "F" },
    action,
  });
}

// uploadThere copies a file to another space: the server moves and copies
// within a space only. If-None-Match: * keeps a file that is there.
async function uploadThere(entry, url, overwrite, action) {
  const res = await dav.send("GET", entry.href, { action });
  const body = await res.blob();
  const headers = { "Content-Type": "application/octet-stream" };
  if (!overwrite) {
    headers["If-None-Match"] = "*";
  }
  return dav.send("PUT", url, { headers, body, action });
}

/** numbered is "name (n).ext". */
export function numbered(name, n) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

// keepBoth tries "name (2).ext", "name (3).ext", … until one is free.
async function keepBoth(name, tryName) {
  for (let n = 2; n < 100; n++) {
    const candidate = numbered(name, n);
    try {
      await tryName(candidate);
      return candidate;
    } catch (err) {
      if (err.status !== 412) {
        throw err;
      }
    }
  }
  throw new Error(`Could not find a free name for “${name}”.`);
}

/**
 * askClash asks what to do when name is taken: resolves "keep" (both,
 * the new one numbered), "replace" or null (cancel).
 */
export function askClash(name) {
  return new Promise((resolve) => {
    const choose = (value) => () => {
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    const title = `“${name}” is already there`;
    const dialog = h("dialog", { class: "clash", "aria-label": title },
      h("h2", {}, title),
      h("p", {}, "Keep both (the new one gets a number), or replace the one that is there?"),
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: choose(null) }, "Cancel"),
        h("button", { type: "button", class: "secondary", onclick: choose("replace") }, "Replace"),
        h("button", { type: "button", class: "primary", onclick: choose("keep") }, "Keep both")));
    dialog.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      choose(null)();
    });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector("button.primary").focus();
  });
}

/** DRAG_TYPE marks a row dragged within the page (desktop files carry "Files"). */
const DRAG_TYPE = "application/x-davspaces-entry";

/** startDrag offers the row of entry for a move (or, with Ctrl or Alt, a copy). */
export function startDrag(ev, entry) {
  ev.dataTransfer.setData(DRAG_TYPE, entry.href);
  ev.dataTransfer.setData("text/uri-list", new URL(entry.href, location.origin).href);
  ev.dataTransfer.effectAllowed = "copyMove";
}

/**
 * acceptDrops makes el a drop target for rows: dragged() is the entry
 * being dragged (null for anything else), drop(entry, copy) is called on
 * a drop. A drop of desktop files is left to the upload's drop zone.
 */
export function acceptDrops(el, dragged, drop) {
  const ours = (ev) => ev.dataTransfer.types.includes(DRAG_TYPE) && dragged();
  el.addEventListener("dragover", (ev) => {
    if (!ours(ev)) {
      return;
    }
    ev.preventDefault();
    ev.dataTransfer.dropEffect = ev.ctrlKey || ev.altKey ? "copy" : "move";
    el.classList.add("drop-target");
  });
  el.addEventListener("dragleave", () => el.classList.remove("drop-target"));
  el.addEventListener("drop", (ev) => {
    el.classList.remove("drop-target");
    const entry = ours(ev);
    if (entry) {
      ev.preventDefault();
      drop(entry, ev.ctrlKey || ev.altKey);
    }
  });
}
