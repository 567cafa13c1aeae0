// Where a signed-in page is: a WebDAV base path and the names below it,
// the URL of a folder, the space a base path names and its title. Pure
// functions of paths and drives (node --test runs them, webui/testdata).

import { encodePath } from "./davwire.js";

// A WebDAV base path: the personal space (/webdav, /dav/files/{user}) or
// any space by id (/dav/spaces/{id}), with or without /remote.php.
const basePattern = /^((?:\/remote\.php)?\/(?:webdav|dav\/files\/[^/]+|dav\/spaces\/[^/]+))(\/.*)?$/;

/** parseLocation splits a page's path into its base (as sent) and the decoded names below. */
export function parseLocation(pathname) {
  const m = basePattern.exec(pathname);
  if (!m) {
    return null;
  }
  const segments = (m[2] || "").split("/").filter(Boolean).map(decodeURIComponent);
  return { base: m[1], segments };
}

/**
 * segmentsBelow are the decoded names of href below base, or below any
 * WebDAV base path when href is not under base.
 */
export function segmentsBelow(base, href) {
  const path = href.startsWith(`${base}/`) ? href.slice(base.length) : (basePattern.exec(href) || [])[2] || "";
  return path.split("/").filter(Boolean).map(decodeURIComponent);
}

/** folderURL is the page's URL of the folder at segments below base. */
export function folderURL(base, segments) {
  return segments.length ? `${base}/${encodePath(segments)}/` : `${base}/`;
}

/** spaceOf finds the Graph drive a base path names. */
export function spaceOf(drives, base) {
  const m = /\/dav\/spaces\/([^/]+)$/.exec(base);
  if (!m) {
    return drives.find((d) => d.driveType === "personal");
  }
  const id = decodeURIComponent(m[1]);
  return drives.find((d) => d.id === id);
}

/** spaceTitle is what the page calls a space. */
export function spaceTitle(drive) {
  if (!drive) {
    return "Space";
  }
  switch (drive.driveType) {
    case "personal":
      return "Personal";
    case "virtual":
      return "Shared with me";
  }
  return drive.name;
}

