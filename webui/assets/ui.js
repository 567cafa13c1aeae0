// Small DOM helpers: elements, icons, dialogs and the status line. No
// inline script or style anywhere: the page runs under a strict
// Content-Security-Policy.

/** h creates an element with attributes (on* are listeners) and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (name.startsWith("on")) {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = value;
    } else {
      el.setAttribute(name, value === true ? "" : value);
    }
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// Stroked 24×24 icons, drawn by hand.
const iconPaths = {
  folder: "M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z",
  file: "M14 3H6.5A1.5 1.5 0 0 0 5 4.5v15A1.5 1.5 0 0 0 6.5 21h11a1.5 1.5 0 0 0 1.5-1.5V8zM14 3v5h5",
  text: "M14 3H6.5A1.5 1.5 0 0 0 5 4.5v15A1.5 1.5 0 0 0 6.5 21h11a1.5 1.5 0 0 0 1.5-1.5V8zM14 3v5h5M8.5 12.5h7M8.5 16h7",
  image: "M4 5h16v14H4zM4 16l4.5-4.5 4 4 2.5-2.5 5 5M15.5 9.5h.01",
  audio: "M9 17V5l11-2v12M9 17a2.5 2.5 0 1 1-5 0 2.5 2.5 0 0 1 5 0zM20 15a2.5 2.5 0 1 1-5 0 2.5 2.5 0 0 1 5 0z",
  video: "M3 6h13v12H3zM16 10.5l5-3v9l-5-3",
  archive: "M3 4h18v4H3zM5 8v12h14V8M10 12h4",
  code: "M8.5 7.5 4 12l4.5 4.5M15.5 7.5 20 12l-4.5 4.5",
  pdf: "M14 3H6.5A1.5 1.5 0 0 0 5 4.5v15A1.5 1.5 0 0 0 6.5 21h11a1.5 1.5 0 0 0 1.5-1.5V8zM14 3v5h5M8 17v-4h1.5a1.5 1.5 0 0 1 0 3H8",
  trash: "M4 7h16M9.5 7V4.5h5V7M6.5 7l1 13h9l1-13M10 11v5M14 11v5",
  rename: "M4 20h4L19.5 8.5l-4-4L4 16zM13.5 6.5l4 4",
  restore: "M4 12a8 8 0 1 0 2.4-5.7M4 4v5h5",
  purge: "M6 6l12 12M18 6 6 18",
  download: "M12 4v11M7 10.5l5 5 5-5M5 20h14",
  newFolder: "M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM12 10v6M9 13h6",
  back: "M15 5l-7 7 7 7",
  space: "M4 6h16v12H4zM4 10h16",
  person: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4.5 20a7.5 7.5 0 0 1 15 0",
  star: "M12 3.5l2.6 5.3 5.9.9-4.3 4.1 1 5.8-5.2-2.7-5.2 2.7 1-5.8-4.3-4.1 5.9-.9z",
  starFilled: "M12 3.5l2.6 5.3 5.9.9-4.3 4.1 1 5.8-5.2-2.7-5.2 2.7 1-5.8-4.3-4.1 5.9-.9z",
  info: "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM12 11v5.5M12 7.5h.01",
  move: "M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM9 13h6M12.5 10.5 15 13l-2.5 2.5",
  share: "M17.5 8a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5zM6.5 14.5a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5zM17.5 21a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5zM8.7 13.3l6.6 3.9M15.3 6.8l-6.6 3.9",
  link: "M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1",
  // Uploads (upload.js).
  upload: "M12 16V5M7 9.5l5-5 5 5M5 20h14",
  uploadFolder: "M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2zM12 16v-5.5M9.5 13l2.5-2.5 2.5 2.5",
  pause: "M8 5v14M16 5v14",
  play: "M7 4.5v15l12-7.5z",
  chevron: "M6 9l6 6 6-6",
  // App passwords (devices.js).
  key: "M14.5 14a5 5 0 1 0-4.8-3.6L3.5 16.6V20.5h3.9v-2h2v-2h2l1.2-1.2a5 5 0 0 0 1.9.7zM16 8h.01",
  copy: "M9 9h11v11H9zM5 15H4V4h11v1",
  search: "M10.5 17a6.5 6.5 0 1 0 0-13 6.5 6.5 0 0 0 0 13zM15.5 15.5 20 20",
};

/** icon returns the named icon as inline SVG, hidden from screen readers. */
export function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `icon icon-${name}`);
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", iconPaths[name] || iconPaths.file);
  svg.append(path);
  return svg;
}

const kinds = {
  image: ["png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "tif", "tiff", "heic", "avif"],
  audio: ["mp3", "wav", "flac", "ogg", "m4a", "aac", "opus"],
  video: ["mp4", "mkv", "mov", "avi", "webm", "m4v"],
  archive: ["zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "zst"],
  code: ["js", "mjs", "ts", "go", "py", "c", "h", "cpp", "rs", "java", "sh", "json", "xml", "yaml", "yml", "html", "css", "toml"],
  text: ["txt", "md", "csv", "log", "rtf", "doc", "docx", "odt", "tex"],
  pdf: ["pdf"],
};
const kindByExtension = new Map(Object.entries(kinds).flatMap(([kind, exts]) => exts.map((e) => [e, kind])));

/** kindOf names the icon of an entry by its type. */
export function kindOf(entry) {
  if (entry.folder) {
    return "folder";
  }
  const dot = entry.name.lastIndexOf(".");
  return (dot > 0 && kindByExtension.get(entry.name.slice(dot + 1).toLowerCase())) || "file";
}

// The server shows these inline (images but SVG, plain text, PDF, audio,
// video); everything else it sends as a download.
const inlineKinds = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "avif", "ico", "txt", "pdf", ...kinds.audio, "mp4", "webm", "m4v", "mov"]);

/** opensInline tells whether the browser shows entry's content in a tab. */
export function opensInline(entry) {
  const dot = entry.name.lastIndexOf(".");
  return !entry.folder && dot > 0 && inlineKinds.has(entry.name.slice(dot + 1).toLowerCase());
}

const units = ["B", "KB", "MB", "GB", "TB", "PB"];

/** formatSize writes a byte count for people (decimal units). */
export function formatSize(bytes) {
  let n = bytes;
  let unit = 0;
  while (n >= 1000 && unit < units.length - 1) {
    n /= 1000;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[unit]}`;
}

const numberFormat = new Intl.NumberFormat();

/** formatItems writes how many items a listing holds. */
export function formatItems(n) {
  return `${numberFormat.format(n)} ${n === 1 ? "item" : "items"}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function formatDate(date) {
  return date && !Number.isNaN(date.getTime()) ? dateFormat.format(date) : "";
}

/** showStatus tells the person what happened; errors stay until closed. */
export function showStatus(message, { error = false } = {}) {
  const status = document.getElementById("status");
  const close = h("button", { class: "plain", type: "button", "aria-label": "Dismiss", onclick: () => status.replaceChildren() }, icon("purge"));
  status.replaceChildren(h("div", { class: error ? "note error" : "note" }, h("span", {}, message), close));
  if (!error) {
    const shown = status.firstChild;
    setTimeout(() => shown.isConnected && shown.remove(), 6000);
  }
}

/** showError shows a failed action's words. */
export function showError(err) {
  showStatus(err && err.message ? err.message : String(err), { error: true });
}

/**
 * actOn runs work, then reloads view and says done; a failure is shown
 * instead. The folder and trash views act on a click this way.
 */
export async function actOn(view, work, done) {
  try {
    await work();
    await view.load();
    showStatus(done);
  } catch (err) {
    showError(err);
  }
}

/**
 * showPanel opens a modal dialog of the given class and label: a head with
 * title and a close button (closeLabel), then body. Closed, it is removed
 * and the focus returns to what opened it.
 */
export function showPanel({ className, label, title, closeLabel, body }) {
  const close = h("button", { type: "button", class: "icon-only plain", "aria-label": closeLabel, title: "Close" }, icon("purge"));
  const dialog = h("dialog", { class: className, "aria-label": label },
    h("div", { class: "details-head" }, h("h2", {}, title), close), body);
  // The opener gets the focus back, found again by its label: the table
  // may have been rendered anew meanwhile.
  const opener = document.activeElement && document.activeElement.getAttribute("aria-label");
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    const again = opener && document.querySelector(`[aria-label="${CSS.escape(opener)}"]`);
    if (again) {
      again.focus();
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}

/**
 * ask opens a modal dialog and resolves with the text entered (input
 * given), true (confirmation) or null when cancelled. Escape cancels,
 * Enter confirms. message, if given, says more below the title.
 */
export function ask({ title, message, label, value, confirm = "OK", danger = false }) {
  return new Promise((resolve) => {
    const input = label !== undefined ? h("input", { type: "text", value: value || "", required: true, autocomplete: "off", spellcheck: "false" }) : null;
    const form = h("form", { class: "dialog-form" },
      h("h2", {}, title),
      message && h("p", { class: "dialog-message" }, message),
      input && h("label", {}, h("span", {}, label), input),
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", value: "cancel", onclick: () => finish(null) }, "Cancel"),
        h("button", { type: "submit", class: danger ? "danger" : "primary" }, confirm)));
    const dialog = h("dialog", { "aria-label": title }, form);
    let done = false;
    function finish(result) {
      if (done) {
        return;
      }
      done = true;
      dialog.close();
      dialog.remove();
      resolve(result);
    }
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (input && input.value.trim() === "") {
        input.focus();
        return;
      }
      finish(input ? input.value.trim() : true);
    });
    dialog.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      finish(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    if (input) {
      input.focus();
      const dot = input.value.lastIndexOf(".");
      input.setSelectionRange(0, dot > 0 ? dot : input.value.length);
    }
  });
}
