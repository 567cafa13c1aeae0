// The mass-delete banner (docs/undo.md): over the spaces overview, a
// folder and a trash, the open mass-delete events of the spaces shown, as
// the server lets the person see them (their own clients', or every one
// for a space's managers): "Marie's laptop deleted 2,000 files in Physics
// at 14:02 — Restore all", and for a manager "Keep deletions". One
// request restores an event; the view is then shown again.

import * as dav from "./dav.js";
import { parseLocation, spaceOf, spaceTitle } from "./places.js";
import { ask, formatDate, h, showError, showStatus } from "./ui.js";

const numberFormat = new Intl.NumberFormat();

/** show shows the banner of the view ready is, once it is shown. */
export async function show(page, ready) {
  const old = page.main.querySelector(".massdelete-banner");
  if (old) {
    old.remove();
  }
  if (!["overview", "folder", "trash"].includes(ready)) {
    return;
  }
  const drives = await dav.allDrives().catch(() => []);
  const lists = await Promise.all(spacesShown(drives, ready).map(openEvents));
  const events = lists.flat();
  if (events.length) {
    page.main.prepend(banner(events));
  }
}

// spacesShown are the spaces whose events the view shows: every space on
// the overview, else the space of the folder or trash.
function spacesShown(drives, ready) {
  const own = drives.filter((d) => d.driveType !== "virtual");
  if (ready === "overview") {
    return own;
  }
  const loc = parseLocation(location.pathname);
  const drive = loc && spaceOf(drives, loc.base);
  return drive && drive.driveType !== "virtual" ? [drive] : [];
}

// eventsURL is where the events of a space are.
function eventsURL(drive) {
  return `/dav/spaces/mass-deletes/${encodeURIComponent(drive.id)}`;
}

// openEvents are the open events of drive the person may see; none when
// the server keeps none or the person may not use the space's trash.
async function openEvents(drive) {
  try {
    const res = await dav.send("GET", eventsURL(drive), { action: "look for mass deletes" });
    const { events } = await res.json();
    return events.filter((e) => e.state === "open").map((e) => ({ ...e, drive }));
  } catch {
    return [];
  }
}

function banner(events) {
  return h("div", { class: "massdelete-banner", role: "alert" }, ...events.map(eventLine));
}

function eventLine(e) {
  const files = `${numberFormat.format(e.files)} ${e.files === 1 ? "file" : "files"}`;
  const line = h("div", { class: "note error massdelete", "data-event": e.id },
    h("span", {}, `${e.client} deleted ${files} in ${spaceTitle(e.drive)} at ${formatDate(new Date(e.start))}`),
    h("span", { class: "massdelete-actions" },
      h("button", { type: "button", class: "primary", onclick: () => restore(e, line) }, "Restore all"),
      e.manage && h("button", { type: "button", class: "secondary", onclick: () => confirmDeletions(e, line, files) }, "Keep deletions")));
  return line;
}

async function restore(e, line) {
  busy(line, true);
  try {
    const res = await dav.send("POST", `${eventsURL(e.drive)}/${encodeURIComponent(e.id)}/restore`, { action: "restore the deleted files" });
    const out = await res.json();
    const renamed = out.renamed && out.renamed.length ? `, ${out.renamed.length} beside a newer file` : "";
    showStatus(`Restored ${numberFormat.format(out.restored + out.revived)} items${renamed}`);
    refresh();
  } catch (err) {
    busy(line, false);
    showError(err);
  }
}

async function confirmDeletions(e, line, files) {
  const sure = await ask({
    title: "Keep these deletions?",
    message: `The ${files} stay in the trash until it is emptied or they expire; the client may delete again.`,
    confirm: "Keep deletions",
  });
  if (!sure) {
    return;
  }
  busy(line, true);
  try {
    await dav.send("POST", `${eventsURL(e.drive)}/${encodeURIComponent(e.id)}/confirm`, { action: "keep the deletions" });
    line.remove();
  } catch (err) {
    busy(line, false);
    showError(err);
  }
}

function busy(line, on) {
  for (const button of line.querySelectorAll("button")) {
    button.disabled = on;
  }
}

// refresh shows the view again, as a change of its hash does.
function refresh() {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}
