// The spaces overview at /: a card for each of the user's spaces (its
// kind, the user's role in it, its quota) and one for what others shared.

import * as dav from "./dav.js";
import { spaceTitle } from "./places.js";
import { formatSize, h, icon } from "./ui.js";

// sharesCard is the overview's card of what others shared with the user.
function sharesCard(drive) {
  const href = `${new URL(drive.root.webDavUrl, location.origin).pathname}/`;
  return h("li", { class: "card" },
    h("a", { href, class: "card-link" }, icon("share"), h("span", { class: "card-name" }, spaceTitle(drive))),
    h("p", { class: "card-meta" }, "Files and folders others shared with you"));
}

// roleOf is the user's role in a space, by the permissions of its root.
function roleOf(drive, permissions) {
  if (drive.driveType === "personal") {
    return "Owner";
  }
  if (permissions.includes("P")) {
    return "Manager";
  }
  return /[WCK]/.test(permissions) ? "Editor" : "Viewer";
}

// quotaBar is a space's quota: a meter, or the bytes used when there is no limit.
function quotaBar(quota) {
  const used = quota.used || 0;
  if (!quota.total) {
    return h("p", { class: "quota-text" }, `${formatSize(used)} used, no limit`);
  }
  const ratio = Math.min(1, used / quota.total);
  const fill = h("div", { class: `quota-fill${ratio >= 0.9 ? " full" : ""}` });
  fill.style.width = `${(ratio * 100).toFixed(1)}%`;
  return h("div", { class: "quota" },
    h("div", { class: "quota-track", role: "meter", "aria-valuemin": "0", "aria-valuemax": String(quota.total), "aria-valuenow": String(used), "aria-label": "Space used" }, fill),
    h("p", { class: "quota-text" }, `${formatSize(used)} of ${formatSize(quota.total)} used`));
}

/** show shows the overview in main; setCrumbs sets the header's breadcrumbs. */
export async function show({ main, setCrumbs }) {
  document.title = "Your spaces · davspaces";
  setCrumbs([["Spaces", "/"]]);
  main.replaceChildren(h("h1", {}, "Your spaces"), h("p", { class: "loading" }, "Loading…"));
  const drives = await dav.allDrives();
  const cards = await Promise.all(drives.map(async (drive) => {
    if (drive.driveType === "virtual") {
      return sharesCard(drive);
    }
    const href = `${new URL(drive.root.webDavUrl, location.origin).pathname}/`;
    const root = await dav.stat(href).catch(() => null);
    const role = root ? roleOf(drive, root.permissions) : "";
    const personal = drive.driveType === "personal";
    return h("li", { class: "card" },
      h("a", { href, class: "card-link" },
        icon(personal ? "person" : "space"),
        h("span", { class: "card-name" }, spaceTitle(drive))),
      h("p", { class: "card-meta" }, [personal ? "Personal space" : "Project space", role].filter(Boolean).join(" · ")),
      quotaBar(drive.quota || {}));
  }));
  main.replaceChildren(h("h1", {}, "Your spaces"), h("ul", { class: "cards" }, cards));
}
