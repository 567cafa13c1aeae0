// Uploads from the page: files and folders, picked or dropped on the folder
// view, sent by TUS 1.0.0 (POST to the folder, PATCH in chunks, HEAD to
// learn where to go on) a few at a time, with pause, cancel and resume
// after a dropped connection or a reload of the page. Their panel is docked
// outside the view, so that it stays (and keeps the keyboard's focus) while
// the listing refreshes.

import * as dav from "./dav.js";
import { formatSize, h, icon, showStatus } from "./ui.js";

/**
 * CHUNK is the most bytes one PATCH carries: well below the 100 MB a proxy
 * in front commonly allows per request, large enough that the requests'
 * overhead does not matter. A slice is read from the file as it is sent.
 */
const CHUNK = 32 * 1024 * 1024;
/** PARALLEL is how many files go up at once. */
const PARALLEL = 3;
/** RETRY_DELAYS_MS wait before each try after a dropped connection. */
const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 16000, 30000];
/** TICK_MS is how often the speeds are measured and the panel redrawn. */
const TICK_MS = 500;
/** SAVED_KEY holds the unfinished uploads in localStorage. */
const SAVED_KEY = "davspaces.uploads";

const tusHeaders = { "Tus-Resumable": "1.0.0" };
const active = new Set(["uploading", "retrying"]);
const finished = new Set(["done", "failed", "cancelled"]);

/**
 * SavedUploads are the unfinished uploads kept in the browser's storage, by
 * fingerprint: {url, folder, name, size, offset}. After a reload they are
 * offered for resuming; picking the same file again continues it.
 */
class SavedUploads {
  all() {
    try {
      return JSON.parse(localStorage.getItem(SAVED_KEY)) || {};
    } catch {
      return {};
    }
  }

  get(fp) {
    return this.all()[fp];
  }

  put(fp, entry) {
    this.write({ ...this.all(), [fp]: entry });
  }

  remove(fp) {
    const all = this.all();
    delete all[fp];
    this.write(all);
  }

  write(all) {
    try {
      localStorage.setItem(SAVED_KEY, JSON.stringify(all));
    } catch {
      // Storage full or turned off: uploads still work, only not across a reload.
    }
  }

  /** below lists the saved uploads into folder or a folder beneath it. */
  below(folder) {
    return Object.entries(this.all()).filter(([, e]) => e.folder.startsWith(folder));
  }
}

/** fingerprint names one file's upload into folder: the same file picked again has the same. */
function fingerprint(folder, name, file) {
  return JSON.stringify([folder, name, file.size, file.lastModified]);
}

function base64(text) {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary);
}

function metadata(file, name) {
  const pairs = [["filename", name], ["mtime", String(Math.floor(file.lastModified / 1000))]];
  if (file.type) {
    pairs.push(["filetype", file.type]);
  }
  return pairs.map(([key, value]) => `${key} ${base64(value)}`).join(",");
}

// uploadPath keeps the path of the upload URL the server answers: it is on
// the page's own server, whatever scheme and host a proxy in front made it
// name.
function uploadPath(location) {
  return new URL(location, window.location.href).pathname;
}

/** wait resolves true after ms, or false as soon as signal aborts. */
function wait(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(false);
    }, { once: true });
  });
}

function retryable(err) {
  return err instanceof dav.RequestError && [0, 502, 503, 504].includes(err.status);
}

/** Upload is one file going to a folder. */
class Upload {
  constructor(uploads, file, folder, path) {
    this.uploads = uploads;
    this.file = file;
    this.folder = folder;
    this.path = path; // as shown: below the folder the person chose
    this.name = path.slice(path.lastIndexOf("/") + 1);
    this.size = file.size;
    this.fp = fingerprint(folder, this.name, file);
    const saved = uploads.saved.get(this.fp);
    this.url = saved ? saved.url : "";
    this.offset = 0;
    this.inflight = 0; // bytes of the running PATCH sent so far
    this.sessionBytes = 0; // bytes sent since the page was loaded
    this.resumedFrom = -1; // the server's offset when this page first asked (a saved upload's resume)
    this.retries = 0;
    this.conflicts = 0;
    this.speed = 0;
    this.measured = 0; // sessionBytes at the last measurement
    this.measuredAt = 0;
    this.state = "queued";
    this.message = "";
  }

  get sent() {
    return this.state === "done" ? this.size : this.offset + this.inflight;
  }

  get action() {
    return `upload “${this.path}”`;
  }

  setState(state, message = "") {
    this.state = state;
    this.message = message;
    this.uploads.changed(this);
  }

  /** run sends the file until it is done, paused, cancelled or refused. */
  async run() {
    this.abort = new AbortController();
    const { signal } = this.abort;
    for (;;) {
      this.setState("uploading");
      try {
        await this.transfer(signal);
        this.succeed();
        return;
      } catch (err) {
        this.inflight = 0;
        if (signal.aborted) {
          return; // paused or cancelled, which set the state
        }
        if (!retryable(err) || this.retries >= RETRY_DELAYS_MS.length) {
          this.setState("failed", this.words(err));
          return;
        }
        const delay = RETRY_DELAYS_MS[this.retries++];
        this.setState("retrying", `Connection lost. Trying again in ${delay / 1000} s…`);
        if (!(await wait(delay, signal))) {
          return;
        }
      }
    }
  }

  // words says why the upload failed. A precondition failed at the commit
  // means the file was changed by someone else while this one went up.
  words(err) {
    if (err instanceof dav.RequestError && err.status === 412) {
      return `Could not ${this.action}: the file there was changed meanwhile. Reload the page and upload it again.`;
    }
    return err.message || String(err);
  }

  async transfer(signal) {
    if (this.url) {
      await this.learnOffset(signal);
    }
    if (!this.url) {
      await this.create(signal);
    }
    while (this.offset < this.size) {
      await this.patch(signal);
    }
  }

  // learnOffset asks the server how far the upload is; one it no longer
  // has (expired) starts over.
  async learnOffset(signal) {
    try {
      const res = await dav.send("HEAD", this.url, { headers: tusHeaders, signal, action: this.action });
      this.offset = Number(res.headers.get("Upload-Offset"));
      if (this.resumedFrom < 0) {
        this.resumedFrom = this.offset;
      }
    } catch (err) {
      if (!(err instanceof dav.RequestError) || (err.status !== 404 && err.status !== 410)) {
        throw err;
      }
      this.forget();
    }
  }

  // create starts the upload; the server refuses it before the first byte
  // when it would exceed the quota.
  async create(signal) {
    const res = await dav.send("POST", this.folder, {
      headers: { ...tusHeaders, "Upload-Length": String(this.size), "Upload-Metadata": metadata(this.file, this.name) },
      signal,
      action: this.action,
    });
    this.url = uploadPath(res.headers.get("Location"));
    this.offset = Number(res.headers.get("Upload-Offset") || 0);
    this.save();
  }

  // patch sends the next chunk. A conflict over the offset (the browser
  // sent a chunk again on a new connection after the old one broke, and
  // the server had kept part of it) is settled by asking for the offset.
  async patch(signal) {
    try {
      await this.sendChunk(signal);
      this.conflicts = 0;
    } catch (err) {
      if (!(err instanceof dav.RequestError) || err.status !== 409 || ++this.conflicts > 3) {
        throw err;
      }
      this.inflight = 0;
      await this.learnOffset(signal);
    }
  }

  async sendChunk(signal) {
    const end = Math.min(this.offset + CHUNK, this.size);
    const res = await dav.send("PATCH", this.url, {
      headers: { ...tusHeaders, "Upload-Offset": String(this.offset), "Content-Type": "application/offset+octet-stream" },
      body: this.file.slice(this.offset, end),
      signal,
      action: this.action,
      onUploadProgress: (bytes) => {
        this.sessionBytes += Math.max(0, bytes - this.inflight);
        this.inflight = bytes;
      },
    });
    this.inflight = 0;
    this.offset = Number(res.headers.get("Upload-Offset") || end);
    this.retries = 0;
    this.save();
  }

  save() {
    if (this.state === "cancelled") {
      return; // a chunk that ended as it was cancelled
    }
    this.uploads.saved.put(this.fp, { url: this.url, folder: this.folder, name: this.name, path: this.path, size: this.size, offset: this.offset });
  }

  forget() {
    this.uploads.saved.remove(this.fp);
    this.url = "";
    this.offset = 0;
  }

  succeed() {
    this.uploads.saved.remove(this.fp);
    this.offset = this.size;
    this.setState("done");
    this.uploads.fileDone(this);
  }

  pause() {
    if (this.abort) {
      this.abort.abort();
    }
    this.inflight = 0;
    this.setState("paused");
  }

  resume() {
    this.retries = 0;
    this.setState("queued");
  }

  async cancel() {
    if (this.abort) {
      this.abort.abort();
    }
    this.inflight = 0;
    this.setState("cancelled");
    const url = this.url;
    this.forget();
    if (url) {
      // Termination frees the bytes on the server; an upload it has no
      // more is as good.
      await dav.send("DELETE", url, { headers: tusHeaders }).catch(() => {});
    }
  }
}

const durationUnits = [[3600, "h"], [60, "min"], [1, "s"]];

/** formatDuration writes seconds left for people: "4 s", "3 min", "1 h 5 min". */
function formatDuration(seconds) {
  if (!Number.isFinite(seconds)) {
    return "";
  }
  const s = Math.max(1, Math.round(seconds));
  const parts = [];
  let left = s;
  for (const [size, unit] of durationUnits) {
    if (left >= size && parts.length < 2 && (parts.length === 0 || unit !== "s" || s < 3600)) {
      parts.push(`${Math.floor(left / size)} ${unit}`);
      left %= size;
    }
  }
  return parts.join(" ");
}

function rate(bytesPerSecond) {
  return bytesPerSecond > 0 ? `${formatSize(Math.round(bytesPerSecond))}/s` : "";
}

function progressBar(label) {
  const fill = h("div", { class: "upload-fill" });
  const track = h("div", { class: "upload-track", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100", "aria-label": label }, fill);
  return { track, fill };
}

function setBar(bar, ratio) {
  const percent = Math.round(Math.min(1, ratio) * 100);
  bar.fill.style.width = `${(Math.min(1, ratio) * 100).toFixed(1)}%`;
  bar.track.setAttribute("aria-valuenow", String(percent));
}

/** UploadRow is an upload's line in the panel, updated in place. */
class UploadRow {
  constructor(upload) {
    this.upload = upload;
    this.bar = progressBar(`Progress of ${upload.path}`);
    this.text = h("span", { class: "upload-text" });
    this.toggle = h("button", { type: "button", class: "icon-only plain", onclick: () => this.togglePause() });
    this.cancel = h("button", { type: "button", class: "icon-only plain", title: `Cancel ${upload.path}`, "aria-label": `Cancel ${upload.path}`, onclick: () => upload.cancel() }, icon("purge"));
    this.el = h("li", { class: "upload", "data-name": upload.path },
      h("div", { class: "upload-head" },
        icon("file"),
        h("span", { class: "upload-name", title: upload.path }, upload.path),
        h("span", { class: "upload-buttons" }, this.toggle, this.cancel)),
      this.bar.track,
      this.text);
  }

  togglePause() {
    const u = this.upload;
    if (u.state === "paused" || u.state === "failed") {
      u.resume();
    } else {
      u.pause();
    }
  }

  update() {
    const u = this.upload;
    Object.assign(this.el.dataset, { state: u.state, sent: String(u.sent), sessionBytes: String(u.sessionBytes), resumedFrom: String(u.resumedFrom) });
    setBar(this.bar, u.size ? u.sent / u.size : 1);
    this.text.textContent = this.describe();
    this.text.classList.toggle("error", u.state === "failed");
    const canResume = u.state === "paused" || u.state === "failed";
    const label = `${canResume ? (u.state === "failed" ? "Try again" : "Resume") : "Pause"} ${u.path}`;
    this.toggle.replaceChildren(icon(canResume ? (u.state === "failed" ? "restore" : "play") : "pause"));
    this.toggle.setAttribute("aria-label", label);
    this.toggle.title = label;
    const over = finished.has(u.state);
    this.toggle.hidden = over && u.state !== "failed";
    this.cancel.hidden = over && u.state !== "failed";
  }

  describe() {
    const u = this.upload;
    const amount = `${formatSize(u.sent)} of ${formatSize(u.size)}`;
    const percent = `${u.size ? Math.floor((u.sent / u.size) * 100) : 100} %`;
    switch (u.state) {
      case "queued":
        return `Waiting · ${amount}`;
      case "uploading": {
        const left = u.speed > 0 ? `${formatDuration((u.size - u.sent) / u.speed)} left` : "";
        return [percent, amount, rate(u.speed), left].filter(Boolean).join(" · ");
      }
      case "retrying":
        return `${percent} · ${u.message}`;
      case "paused":
        return `Paused · ${percent} · ${amount}`;
      case "done":
        return `Done · ${formatSize(u.size)}`;
      case "cancelled":
        return "Cancelled";
      default:
        return u.message;
    }
  }
}

/**
 * Uploads holds the page's uploads and their panel, and takes files from
 * the Upload buttons and from drops on zone (the folder view).
 */
export class Uploads {
  constructor(zone) {
    this.saved = new SavedUploads();
    this.items = [];
    this.rows = new Map();
    this.folder = null;
    this.refreshView = () => {};
    // Not a live region: read twice a second, it would drown everything.
    this.summary = h("p", { class: "upload-summary" });
    this.overall = progressBar("Progress of all uploads");
    this.list = h("ul", { class: "upload-list" });
    this.waiting = h("ul", { class: "upload-list waiting" });
    this.collapse = h("button", { type: "button", class: "icon-only plain", "aria-expanded": "true", "aria-label": "Hide the uploads", title: "Hide the uploads", onclick: () => this.toggleCollapsed() }, icon("chevron"));
    this.clear = h("button", { type: "button", class: "plain", onclick: () => this.clearFinished() }, "Clear finished");
    this.panel = h("aside", { class: "uploads", "aria-label": "Uploads", hidden: true },
      h("div", { class: "uploads-head" }, h("h2", {}, "Uploads"), this.clear, this.collapse),
      h("div", { class: "uploads-body" }, this.summary, this.overall.track, this.list, this.waiting));
    document.body.append(this.panel);
    this.filesInput = this.input({ "data-upload": "files" });
    this.folderInput = this.input({ "data-upload": "folder", webkitdirectory: true });
    this.watchDrops(zone);
    this.ticker = 0;
  }

  input(attrs) {
    const el = h("input", { type: "file", multiple: true, hidden: true, tabindex: "-1", ...attrs });
    el.addEventListener("change", () => {
      const files = Array.from(el.files, (file) => ({ file, path: file.webkitRelativePath || file.name }));
      el.value = "";
      this.add(files, []);
    });
    return el;
  }

  /**
   * buttons are the view's Upload buttons, with their file inputs; without
   * folders, files only (a file drop takes no folders).
   */
  buttons({ folders = true } = {}) {
    return [
      h("button", { type: "button", class: "secondary", onclick: () => this.filesInput.click() }, icon("upload"), h("span", {}, "Upload files")),
      folders && h("button", { type: "button", class: "secondary", onclick: () => this.folderInput.click() }, icon("uploadFolder"), h("span", {}, "Upload folder")),
      this.filesInput,
      folders && this.folderInput,
    ].filter(Boolean);
  }

  /**
   * showIn makes folder (a folder URL, or null for none, as in the trash)
   * where picked and dropped files go; refresh shows it anew after a file
   * or folder arrived in it.
   */
  showIn(folder, refresh = () => {}) {
    this.folder = folder;
    this.refreshView = refresh;
    this.renderWaiting();
  }

  watchDrops(zone) {
    // Files dragged here never open in the tab instead of the page, also
    // where they cannot be uploaded.
    const carriesFiles = (ev) => ev.dataTransfer && ev.dataTransfer.types.includes("Files");
    zone.addEventListener("dragover", (ev) => {
      if (carriesFiles(ev)) {
        ev.preventDefault();
        ev.dataTransfer.dropEffect = this.folder ? "copy" : "none";
        zone.classList.toggle("drop-target", !!this.folder);
      }
    });
    zone.addEventListener("dragleave", (ev) => {
      if (!zone.contains(ev.relatedTarget)) {
        zone.classList.remove("drop-target");
      }
    });
    zone.addEventListener("drop", (ev) => {
      zone.classList.remove("drop-target");
      if (!carriesFiles(ev)) {
        return;
      }
      ev.preventDefault();
      if (!this.folder) {
        showStatus("Files can be uploaded only into a folder you may change: open one, then drop them there.", { error: true });
        return;
      }
      // The items are readable only during the event: take their entries now.
      const taken = Array.from(ev.dataTransfer.items, (item) => ({ entry: item.webkitGetAsEntry && item.webkitGetAsEntry(), file: item.getAsFile() }));
      droppedFiles(taken).then(({ files, folders }) => this.add(files, folders), (err) => this.summary.replaceChildren(String(err)));
    });
  }

  /**
   * add uploads files ({file, path below the view's folder}) after
   * creating the folders they go into and the empty folders dropped.
   */
  async add(files, folders) {
    const base = this.folder;
    if (!base || (files.length === 0 && folders.length === 0)) {
      return;
    }
    const dirs = new Set(folders.map((f) => f.join("/")));
    for (const { path } of files) {
      const names = path.split("/").slice(0, -1);
      names.forEach((_, i) => dirs.add(names.slice(0, i + 1).join("/")));
    }
    const failed = await this.makeFolders(base, [...dirs]);
    const going = new Set(this.items.filter((u) => !finished.has(u.state)).map((u) => u.fp));
    for (const { file, path } of files) {
      const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
      const upload = new Upload(this, file, dir ? `${base}${dav.encodePath(dir.split("/"))}/` : base, path);
      if (going.has(upload.fp)) {
        continue; // picked again while it goes up
      }
      if (failed.has(dir)) {
        upload.state = "failed";
        upload.message = failed.get(dir);
      }
      this.items.push(upload);
    }
    this.panel.hidden = false;
    this.renderWaiting();
    this.pump();
    if (dirs.size > 0) {
      this.refreshView();
    }
  }

  // makeFolders creates dirs (paths below base), parents first; one there
  // already is fine. It returns the words of those that could not be made.
  async makeFolders(base, dirs) {
    const failed = new Map();
    dirs.sort((a, b) => a.split("/").length - b.split("/").length);
    for (const dir of dirs) {
      const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
      if (failed.has(parent)) {
        failed.set(dir, failed.get(parent));
        continue;
      }
      try {
        await dav.send("MKCOL", `${base}${dav.encodePath(dir.split("/"))}/`, { action: `create the folder “${dir}”` });
      } catch (err) {
        if (!(err instanceof dav.RequestError) || err.status !== 405) {
          failed.set(dir, err.message || String(err));
        }
      }
    }
    return failed;
  }

  /**
   * pump starts queued uploads while fewer than PARALLEL are sending, and
   * measures their speed while any is.
   */
  pump() {
    let running = this.items.filter((u) => active.has(u.state)).length;
    for (const u of this.items) {
      if (running >= PARALLEL) {
        break;
      }
      if (u.state === "queued") {
        running++;
        u.run().finally(() => this.pump());
      }
    }
    if (running > 0 && !this.ticker) {
      this.ticker = setInterval(() => this.tick(), TICK_MS);
    } else if (running === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = 0;
    }
  }

  changed(upload) {
    if (!active.has(upload.state)) {
      this.pump();
    }
    if (upload.state === "cancelled") {
      this.renderWaiting();
    }
    this.render();
  }

  // fileDone refreshes the view when the file arrived in or below it, once
  // for files that finish together.
  fileDone(upload) {
    if (!this.folder || !upload.folder.startsWith(this.folder)) {
      return;
    }
    clearTimeout(this.refreshTimer);
    const refresh = this.refreshView;
    this.refreshTimer = setTimeout(refresh, 200);
  }

  // tick measures each sending upload's speed, smoothed over a few
  // seconds so that chunk boundaries and bursts do not make it jump.
  tick() {
    const now = performance.now();
    for (const u of this.items) {
      if (!active.has(u.state)) {
        u.speed = 0;
        u.measuredAt = 0; // a resumed upload is measured afresh
        continue;
      }
      const seconds = (now - (u.measuredAt || now)) / 1000;
      if (seconds > 0) {
        const current = (u.sessionBytes - u.measured) / seconds;
        u.speed = u.speed ? 0.7 * u.speed + 0.3 * current : current;
      }
      u.measured = u.sessionBytes;
      u.measuredAt = now;
    }
    this.render();
  }

  render() {
    for (const u of this.items) {
      let row = this.rows.get(u);
      if (!row) {
        row = new UploadRow(u);
        this.rows.set(u, row);
        this.list.prepend(row.el); // the newest first
      }
      row.update();
    }
    const counted = this.items.filter((u) => u.state !== "cancelled");
    const size = counted.reduce((n, u) => n + u.size, 0);
    const sent = counted.reduce((n, u) => n + u.sent, 0);
    const done = counted.filter((u) => u.state === "done").length;
    const speed = this.items.reduce((n, u) => n + (active.has(u.state) ? u.speed : 0), 0);
    const left = speed > 0 && sent < size ? `${formatDuration((size - sent) / speed)} left` : "";
    this.summary.textContent = [`${done} of ${counted.length} files`, `${formatSize(sent)} of ${formatSize(size)}`, rate(speed), left].filter(Boolean).join(" · ");
    setBar(this.overall, size ? sent / size : 1);
    this.clear.hidden = !this.items.some((u) => finished.has(u.state));
    this.panel.hidden = this.items.length === 0 && this.waiting.childElementCount === 0;
    this.overall.track.hidden = this.items.length === 0;
    this.summary.hidden = this.items.length === 0;
    document.body.classList.toggle("uploads-open", !this.panel.hidden);
  }

  // renderWaiting lists the unfinished uploads into the view's folder that
  // this page has not taken up: after a reload, until their file is picked
  // again.
  renderWaiting() {
    const taken = new Set(this.items.filter((u) => u.state !== "cancelled").map((u) => u.fp));
    const saved = this.folder ? this.saved.below(this.folder).filter(([fp]) => !taken.has(fp)) : [];
    this.waiting.replaceChildren(...saved.map(([fp, e]) => this.waitingRow(fp, e)));
    this.render();
  }

  waitingRow(fp, entry) {
    const path = entry.path || entry.name;
    const bar = progressBar(`Progress of ${path}`);
    setBar(bar, entry.size ? entry.offset / entry.size : 0);
    const forget = h("button", { type: "button", class: "icon-only plain", title: `Cancel ${path}`, "aria-label": `Cancel ${path}`, onclick: () => this.forgetSaved(fp, entry) }, icon("purge"));
    return h("li", { class: "upload", "data-name": path, "data-state": "waiting" },
      h("div", { class: "upload-head" }, icon("file"), h("span", { class: "upload-name", title: path }, path), h("span", { class: "upload-buttons" }, forget)),
      bar.track,
      h("span", { class: "upload-text" }, `Interrupted at ${formatSize(entry.offset)} of ${formatSize(entry.size)}. Pick the file again to resume.`));
  }

  async forgetSaved(fp, entry) {
    this.saved.remove(fp);
    this.renderWaiting();
    await dav.send("DELETE", entry.url, { headers: tusHeaders }).catch(() => {});
  }

  clearFinished() {
    for (const u of this.items.filter((item) => finished.has(item.state) && item.state !== "failed")) {
      this.rows.get(u).el.remove();
      this.rows.delete(u);
    }
    this.items = this.items.filter((u) => this.rows.has(u));
    this.render();
    this.collapse.focus();
  }

  toggleCollapsed() {
    const collapsed = this.panel.classList.toggle("collapsed");
    const label = collapsed ? "Show the uploads" : "Hide the uploads";
    this.collapse.setAttribute("aria-expanded", String(!collapsed));
    this.collapse.setAttribute("aria-label", label);
    this.collapse.title = label;
  }
}

/**
 * droppedFiles walks what was dropped: files, and folders with everything
 * in them. It returns the files with their paths below the drop's folder
 * and every folder (as its names), the empty ones included.
 */
async function droppedFiles(taken) {
  const out = { files: [], folders: [] };
  for (const { entry, file } of taken) {
    if (entry) {
      await walk(entry, [], out);
    } else if (file) {
      out.files.push({ file, path: file.name });
    }
  }
  return out;
}

async function walk(entry, parents, out) {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    out.files.push({ file, path: [...parents, entry.name].join("/") });
    return;
  }
  const names = [...parents, entry.name];
  out.folders.push(names);
  const reader = entry.createReader();
  // readEntries answers a batch at a time (100 in Chromium), then none.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) {
      return;
    }
    for (const child of batch) {
      await walk(child, names, out);
    }
  }
}
