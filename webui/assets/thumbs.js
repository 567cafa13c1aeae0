// Previews: a small one in place of a file's icon in the listings, for
// the rows on screen only, and a large one in the viewer. They are fetched
// through dav.send, with the page's credentials whatever they are (the
// browser's Basic sign-in, a token, a public link's password), and shown
// from blob: URLs; a file without a preview keeps its icon.

import * as dav from "./dav.js";
import { h, icon } from "./ui.js";

const SMALL = 36;
const LARGE = 1024;
// AT_ONCE bounds the previews the listing asks for at a time. The server
// makes as many at once as it has cores (by default) and answers 429
// beyond, which costs a second's wait and a retry: two keep a small
// server's slots busy without that.
const AT_ONCE = 2;

// The extensions of the pictures the server makes previews of, as the
// preview package names them; the server's list of types (files.thumbnail
// in its capabilities) says which of them it serves.
const typeByExtension = new Map([
  ["png", "image/png"], ["jpg", "image/jpeg"], ["jpeg", "image/jpeg"], ["jpe", "image/jpeg"], ["jfif", "image/jpeg"],
  ["gif", "image/gif"], ["bmp", "image/bmp"], ["tif", "image/tiff"], ["tiff", "image/tiff"], ["webp", "image/webp"],
]);

/**
 * previewTypes resolves to the content types the server makes previews
 * of, as its capabilities list them. A public link's page has no user to
 * read them as: it tries every type the page knows, a missing preview
 * being only a 404.
 */
export async function previewTypes({ publicLink = false } = {}) {
  if (publicLink) {
    return [...new Set(typeByExtension.values())];
  }
  const thumbnail = ((await dav.capabilities()).files || {}).thumbnail;
  return thumbnail && thumbnail.enabled ? thumbnail.supportedMimeTypes || [] : [];
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * fetchPreview resolves to the preview of the file at href fitting a
 * size×size box, or null when there is none (404, 415, 413, 503…). A 429
 * is retried once after its Retry-After.
 */
export async function fetchPreview(href, size, etag) {
  const url = `${href}?preview=1&x=${size}&y=${size}&a=1${etag ? `&c=${encodeURIComponent(etag)}` : ""}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const res = await dav.send("GET", url, { cache: "no-cache" });
      return await res.blob();
    } catch (err) {
      if (err.status !== 429) {
        return null;
      }
      await sleep(Math.min(err.retryAfter || 1, 10) * 1000);
    }
  }
  return null;
}

// showBlob makes img show blob. The blob: URL is revoked once the image
// is decoded (the element keeps the picture), so that rows that go away
// leave nothing behind.
function showBlob(img, blob) {
  const url = URL.createObjectURL(blob);
  return new Promise((resolve) => {
    const done = (ok) => {
      URL.revokeObjectURL(url);
      resolve(ok);
    };
    img.addEventListener("load", () => done(true), { once: true });
    img.addEventListener("error", () => done(false), { once: true });
    img.src = url;
  });
}

/**
 * Thumbnails puts previews in place of icons as their rows come on
 * screen (an IntersectionObserver), a few requests at a time.
 */
export class Thumbnails {
  constructor(types) {
    // Pictures only: a text file's preview, a page of small print, is a
    // blank square at this size, less telling than its icon.
    this.types = new Set(types.filter((type) => type.startsWith("image/")));
    this.waiting = [];
    this.running = 0;
    this.entries = new WeakMap();
    this.observer = new IntersectionObserver((seen) => this.seen(seen), { rootMargin: "100px" });
  }

  /** has tells whether entry gets a preview (the server makes one of its type). */
  has(entry) {
    const dot = entry.name.lastIndexOf(".");
    return !entry.folder && dot > 0 && this.types.has(typeByExtension.get(entry.name.slice(dot + 1).toLowerCase()));
  }

  /**
   * icon returns entry's icon in a box that shows its preview instead once
   * the box is on screen, or, for an entry without previews, the icon.
   */
  icon(entry, kind) {
    if (!this.has(entry)) {
      return icon(kind);
    }
    const box = h("span", { class: "thumb", "data-thumb": "waiting" }, icon(kind));
    this.entries.set(box, entry);
    this.observer.observe(box);
    return box;
  }

  /** stop forgets the boxes not shown yet: the table is made anew. */
  stop() {
    this.observer.disconnect();
    this.waiting = [];
  }

  seen(records) {
    for (const { target, isIntersecting } of records) {
      if (isIntersecting) {
        this.observer.unobserve(target);
        this.waiting.push(target);
      }
    }
    this.next();
  }

  next() {
    while (this.running < AT_ONCE && this.waiting.length > 0) {
      const box = this.waiting.shift();
      if (!box.isConnected) {
        continue;
      }
      this.running++;
      this.load(box).finally(() => {
        this.running--;
        this.next();
      });
    }
  }

  async load(box) {
    const entry = this.entries.get(box);
    const blob = await fetchPreview(entry.href, SMALL, entry.etag);
    if (!blob || !box.isConnected) {
      box.dataset.thumb = "none";
      return;
    }
    const img = h("img", { alt: "", decoding: "async" });
    if (await showBlob(img, blob)) {
      box.replaceChildren(img);
      box.dataset.thumb = "shown";
    } else {
      box.dataset.thumb = "none";
    }
  }
}

/**
 * largePreview is a box that shows entry's large preview once it is
 * fetched, or says that there is none.
 */
export function largePreview(entry) {
  const img = h("img", { alt: `Preview of ${entry.name}`, decoding: "async" });
  const state = h("p", { class: "viewer-state" }, "Loading the preview…");
  const picture = h("div", { class: "viewer-picture", "data-state": "loading" }, state);
  fetchPreview(entry.href, LARGE, entry.etag).then(async (blob) => {
    if (blob && (await showBlob(img, blob))) {
      picture.replaceChildren(img);
      picture.dataset.state = "shown";
      return;
    }
    state.textContent = "There is no preview of this file.";
    picture.dataset.state = "none";
  });
  return picture;
}

/**
 * showViewer opens a dialog with a large preview of entry, and actions
 * (nodes: its download, its opening) under it. Escape closes it.
 */
export function showViewer(entry, actions = []) {
  const picture = largePreview(entry);
  const close = h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Close");
  const dialog = h("dialog", { class: "viewer", "aria-label": entry.name },
    h("h2", {}, entry.name),
    picture,
    h("div", { class: "dialog-buttons" }, ...actions, close));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  return dialog;
}
