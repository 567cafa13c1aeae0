// A file's or folder's details (size, checksums, id, modified, locks), its
// private link, its favourite flag and, for a file, its versions (list,
// download, restore), as a dialog opened from the folder's table.

import * as dav from "./dav.js";
import { showShare } from "./share.js";
import { formatDate, formatSize, h, icon, showError, showPanel, showStatus } from "./ui.js";

const DAV = "DAV:";

const detailProps = [
  ["d", "resourcetype"], ["oc", "size"], ["d", "getlastmodified"], ["oc", "checksums"],
  ["oc", "fileid"], ["oc", "favorite"], ["d", "lockdiscovery"],
];

// Versions of a file often differ by seconds only.
const versionDate = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

const versionProps = [["d", "getlastmodified"], ["d", "getcontentlength"], ["oc", "checksums"]];

/** readDetails asks the server for what the details dialog shows. */
async function readDetails(url) {
  const [{ props }] = await dav.propfind(url, 0, detailProps, "read its details");
  const modified = dav.text(props, "getlastmodified");
  return {
    size: Number(dav.text(props, "size") || 0),
    modified: modified ? new Date(modified) : null,
    checksums: props.checksums ? Array.from(props.checksums.children, (c) => c.textContent.trim()).flatMap((t) => t.split(/\s+/)).filter(Boolean) : [],
    fileId: dav.text(props, "fileid"),
    favorite: dav.text(props, "favorite") === "1",
    locks: props.lockdiscovery ? readLocks(props.lockdiscovery) : [],
  };
}

// readLocks turns d:lockdiscovery into who holds each lock and until when.
function readLocks(discovery) {
  return Array.from(dav.childElements(discovery, DAV, "activelock"), (lock) => {
    const [owner] = dav.childElements(lock, DAV, "owner");
    const [timeout] = dav.childElements(lock, DAV, "timeout");
    const seconds = /Second-(\d+)/.exec(timeout ? timeout.textContent : "");
    return {
      owner: owner ? owner.textContent.trim() : "",
      until: seconds ? new Date(Date.now() + Number(seconds[1]) * 1000) : null,
    };
  });
}

/** versionsURL is where a file's versions are listed, by its file id. */
function versionsURL(fileId) {
  return `/dav/meta/${encodeURIComponent(fileId)}/v`;
}

/** listVersions returns a file's versions, newest first as the server sends them. */
async function listVersions(fileId) {
  const [, ...items] = await dav.propfind(versionsURL(fileId), 1, versionProps, "list the versions");
  return items.map(({ href, props }) => ({
    href,
    key: dav.lastSegment(href),
    size: Number(dav.text(props, "getcontentlength") || 0),
    modified: new Date(dav.text(props, "getlastmodified")),
  }));
}

/** restoreVersion makes a version the file's content again. */
async function restoreVersion(version) {
  try {
    await dav.send("COPY", version.href, { action: "restore the version" });
  } catch (err) {
    if (err.status === 403) {
      throw new Error("Could not restore the version: you may not restore versions in this space.");
    }
    throw err;
  }
}

/** setFavorite sets or clears the signed-in user's favourite flag. */
export function setFavorite(url, on) {
  const body = `<?xml version="1.0" encoding="utf-8"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>${on ? 1 : 0}</oc:favorite></d:prop></d:set></d:propertyupdate>`;
  return dav.send("PROPPATCH", url, {
    headers: { "Content-Type": "application/xml; charset=utf-8" },
    body,
    action: on ? "mark it as a favourite" : "remove it from the favourites",
  });
}

/** privateLink is the address that names the node by its id alone. */
export function privateLink(entry, fileId) {
  return new URL(`/dav/spaces/${encodeURIComponent(fileId)}${entry.folder ? "/" : ""}`, location.origin).href;
}

/** copyLink puts the private link on the clipboard and says so. */
export async function copyLink(entry, fileId) {
  const link = privateLink(entry, fileId);
  try {
    await navigator.clipboard.writeText(link);
    showStatus(`Link to “${entry.name}” copied: ${link}`);
  } catch {
    showError(new Error(`Could not copy the link (the browser refused). The link is ${link}`));
  }
}

/**
 * showDetails opens the details dialog of entry; changed is called after
 * the file changed (a version restored, the favourite toggled). canShare
 * offers the share dialog.
 */
export async function showDetails(entry, changed, { canShare = false } = {}) {
  const body = h("div", { class: "details-body" }, h("p", { class: "loading" }, "Loading…"));
  showPanel({ className: "details", label: `Details of ${entry.name}`, title: entry.name, closeLabel: "Close the details", body });
  const panel = new DetailsPanel(entry, body, changed, canShare);
  await panel.load();
}

class DetailsPanel {
  constructor(entry, body, changed, canShare) {
    this.entry = entry;
    this.body = body;
    this.changed = changed;
    this.canShare = canShare;
  }

  async load() {
    try {
      this.details = await readDetails(this.entry.href);
      this.versions = this.entry.folder ? [] : await listVersions(this.details.fileId).catch((err) => err);
    } catch (err) {
      this.body.replaceChildren(h("p", { class: "note error" }, err.message));
      return;
    }
    this.render();
  }

  render() {
    const d = this.details;
    const rows = [
      ["Size", formatSize(d.size)],
      ["Modified", formatDate(d.modified)],
      ["File id", h("code", {}, d.fileId)],
      ["Checksums", d.checksums.length ? h("ul", { class: "plain-list" }, d.checksums.map((c) => h("li", {}, h("code", {}, c)))) : "none"],
      ["Locks", d.locks.length ? h("ul", { class: "plain-list" }, d.locks.map((l) => h("li", {}, lockText(l)))) : "not locked"],
    ];
    const star = d.favorite ? "Remove from favourites" : "Add to favourites";
    this.body.replaceChildren(
      h("dl", { class: "facts" }, rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      h("div", { class: "tools" },
        h("button", { type: "button", class: "secondary", onclick: () => copyLink(this.entry, d.fileId) }, icon("link"), h("span", {}, "Copy link")),
        this.canShare && h("button", { type: "button", class: "secondary", onclick: () => showShare({ ...this.entry, fileId: d.fileId }).catch(showError) }, icon("share"), h("span", {}, "Share")),
        h("button", { type: "button", class: "secondary", "aria-pressed": String(d.favorite), onclick: () => this.toggleFavorite() }, icon(d.favorite ? "starFilled" : "star"), h("span", {}, star))),
      this.entry.folder ? null : this.versionsSection());
  }

  versionsSection() {
    const heading = h("h3", {}, "Versions");
    if (this.versions instanceof Error) {
      return h("section", { class: "versions" }, heading, h("p", { class: "note error" }, this.versions.message));
    }
    if (this.versions.length === 0) {
      return h("section", { class: "versions" }, heading, h("p", {}, "No earlier versions: the file has not been replaced, or its versions expired."));
    }
    return h("section", { class: "versions" }, heading,
      h("ol", { class: "version-list" }, this.versions.map((v, i) => this.versionRow(v, i))));
  }

  versionRow(version, index) {
    const when = Number.isNaN(version.modified.getTime()) ? "unknown date" : versionDate.format(version.modified);
    const label = `version of ${when}${index === 0 ? " (newest)" : ""}`;
    return h("li", { "data-key": version.key },
      h("span", { class: "version-date" }, when),
      h("span", { class: "version-size" }, formatSize(version.size)),
      h("span", { class: "version-actions" },
        h("a", { class: "button icon-only plain", href: version.href, download: this.entry.name, title: `Download the ${label}`, "aria-label": `Download the ${label}` }, icon("download")),
        h("button", { type: "button", class: "icon-only plain", title: `Restore the ${label}`, "aria-label": `Restore the ${label}`, onclick: () => this.restore(version, when) }, icon("restore"))));
  }

  async restore(version, when) {
    try {
      await restoreVersion(version);
      showStatus(`The version of ${when} is the file's content again.`);
      this.changed();
      await this.load();
    } catch (err) {
      showError(err);
    }
  }

  async toggleFavorite() {
    try {
      await setFavorite(this.entry.href, !this.details.favorite);
      this.changed();
      await this.load();
    } catch (err) {
      showError(err);
    }
  }
}

function lockText(lock) {
  const who = lock.owner || "someone";
  return lock.until ? `by ${who}, until ${formatDate(lock.until)}` : `by ${who}, with no end set`;
}
