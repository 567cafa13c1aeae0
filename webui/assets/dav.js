// The server's endpoints as the page uses them: WebDAV (PROPFIND, MKCOL,
// MOVE, DELETE), the trash-bin and Graph's drives. Every request goes to
// the page's own origin with the browser's credentials (the Basic sign-in
// the browser prompted for) or, signed in with OpenID Connect, the access
// token (auth.js); on a public link's page, with none but the link's
// password (usePublicLink).

import { authorization } from "./auth.js";
import {
  basic, drivesURL, errorMessage, looksLikeXMLError, propfindBody, rangeTotal, readMultistatus, RequestError,
  searchBody, toEntry, toTrashItem, trashPageURL,
} from "./davwire.js";

// The pure parts are davwire.js's; the page's modules find them here.
export { childElements, encodePath, isCollection, lastSegment, RequestError, text } from "./davwire.js";

// publicLink is set on a public link's page (usePublicLink): its requests
// carry none of the browser's credentials (a signed-in browser's Basic
// credentials do not belong there, and a 401 must not open the browser's
// own prompt) but, for a protected link, its password as Basic
// public:<password>. The password lives in this module only.
let publicLink = null;

/** usePublicLink makes every request from now on one of a public link's page. */
export function usePublicLink() {
  publicLink ||= { password: "" };
}

/** setLinkPassword sets the password the public link's requests carry. */
export function setLinkPassword(password) {
  publicLink.password = password;
}

/** hasLinkPassword tells whether the public link's requests carry a password. */
export function hasLinkPassword() {
  return !!publicLink && publicLink.password !== "";
}

// credentialsOf is the Authorization header of a request ("" for none)
// and the fetch credentials mode.
async function credentialsOf() {
  if (publicLink) {
    return { token: publicLink.password ? basic("public", publicLink.password) : "", mode: "omit" };
  }
  return { token: await authorization(), mode: "same-origin" };
}

/**
 * send makes one request and throws a RequestError unless it succeeds.
 * Every request of the page goes through here, with these headers. signal
 * aborts it (then the AbortError is thrown); onUploadProgress(bytes) is told
 * how much of the body went out, which fetch cannot tell in Chromium, so
 * such a request goes by XMLHttpRequest. cache is fetch's: the page's own
 * answers are never taken from the browser's cache, previews (whose URL
 * names the file's etag) are revalidated from it.
 */
export async function send(method, url, { headers = {}, body, action, signal, onUploadProgress, cache = "no-store" } = {}) {
  const { token, mode } = await credentialsOf();
  if (token) {
    headers = { ...headers, Authorization: token };
  }
  const request = { method, headers, body, signal };
  let res;
  try {
    res = onUploadProgress
      ? await sendWithProgress(url, request, onUploadProgress)
      : await fetch(url, { ...request, credentials: mode, cache });
  } catch (err) {
    if (signal && signal.aborted) {
      throw err;
    }
    throw new RequestError(0, "", action);
  }
  if (!res.ok) {
    const err = new RequestError(res.status, await serverMessage(res), action);
    // A 429's wait, in seconds, for words such as "try again in 5 minutes".
    err.retryAfter = Number(res.headers.get("Retry-After")) || 0;
    throw err;
  }
  return res;
}

/** isAbort reports whether err is a request aborted by its signal. */
export function isAbort(err) {
  return err instanceof DOMException && err.name === "AbortError";
}

// sendWithProgress is fetch by XMLHttpRequest, for the upload progress
// events; it answers a Response as fetch does.
function sendWithProgress(url, { method, headers, body, signal }, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) {
      xhr.setRequestHeader(name, value);
    }
    xhr.upload.addEventListener("progress", (ev) => onProgress(ev.loaded));
    xhr.addEventListener("load", () => {
      const empty = [204, 205, 304].includes(xhr.status);
      resolve(new Response(empty ? null : xhr.responseText, { status: xhr.status, headers: responseHeaders(xhr) }));
    });
    xhr.addEventListener("error", () => reject(new TypeError("network error")));
    xhr.addEventListener("timeout", () => reject(new TypeError("timeout")));
    xhr.addEventListener("abort", () => reject(new DOMException("The request was aborted", "AbortError")));
    if (signal) {
      if (signal.aborted) {
        reject(new DOMException("The request was aborted", "AbortError"));
        return;
      }
      signal.addEventListener("abort", () => xhr.abort(), { once: true });
    }
    xhr.send(body === undefined ? null : body);
  });
}

function responseHeaders(xhr) {
  const headers = new Headers();
  for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
  }
  return headers;
}

// serverMessage reads the s:message of a WebDAV XML error body, if any.
async function serverMessage(res) {
  const text = await res.text().catch(() => "");
  if (!looksLikeXMLError(text)) {
    return "";
  }
  return errorMessage(new DOMParser().parseFromString(text, "application/xml"));
}

// A folder's children are listed with the few properties the table shows,
// so that a folder of 10,000 files is a small answer; the folder itself is
// read alone with what the page needs to know about it.
const childProps = [["d", "resourcetype"], ["oc", "size"], ["d", "getlastmodified"], ["oc", "favorite"], ["d", "getetag"]];
const selfProps = [...childProps, ["oc", "permissions"], ["oc", "fileid"], ["oc", "spaceid"]];

const trashProps = [
  ["d", "resourcetype"], ["oc", "size"], ["oc", "trashbin-original-filename"],
  ["oc", "trashbin-original-location"], ["oc", "trashbin-delete-timestamp"],
];

export async function propfind(url, depth, props, action) {
  const res = await send("PROPFIND", url, {
    headers: { Depth: String(depth), "Content-Type": "application/xml; charset=utf-8" },
    body: propfindBody(props),
    action,
  });
  const doc = new DOMParser().parseFromString(await res.text(), "application/xml");
  performance.mark("propfind-parsed");
  return readMultistatus(doc);
}

/**
 * search finds the files and folders of a space whose names hold pattern
 * (REPORT oc:search-files at the space's root URL), a page of limit
 * results from offset, with the properties a listing shows, and the
 * number of matches in all (Content-Range: rows first-last/total; the
 * page's length when the server does not say).
 */
export async function search(rootURL, pattern, { limit = 100, offset = 0 } = {}) {
  const res = await send("REPORT", rootURL, {
    headers: { "Content-Type": "application/xml; charset=utf-8" },
    body: searchBody(pattern, childProps, { limit, offset }),
    action: "search",
  });
  const doc = new DOMParser().parseFromString(await res.text(), "application/xml");
  const entries = readMultistatus(doc).map(toEntry);
  return { entries, total: rangeTotal(res.headers.get("Content-Range"), offset, entries.length) };
}

// capabilitiesOnce is the one request for the server's capabilities a
// page load makes: they change only with the server's configuration.
let capabilitiesOnce = null;

/**
 * capabilities resolves to what the server announces to clients (OCS
 * cloud/capabilities), {} when it cannot be read (a public link's page has
 * no user to ask as).
 */
export function capabilities() {
  capabilitiesOnce ||= send("GET", "/ocs/v1.php/cloud/capabilities?format=json", {
    headers: { "OCS-APIREQUEST": "true", Accept: "application/json" },
  }).then(async (res) => (await res.json()).ocs.data.capabilities || {}).catch(() => ({}));
  return capabilitiesOnce;
}

/** listFolder returns the folder at url and its children. */
export async function listFolder(url) {
  const [self, listing] = await Promise.all([stat(url), propfind(url, 1, childProps, "open the folder")]);
  // The marks time the phases of a big folder's opening (the browser
  // test reports them).
  performance.mark("listing-received");
  const children = listing.slice(1).map(toEntry);
  performance.mark("listing-parsed");
  return { self, children };
}

/** stat returns the folder or file at url alone. */
export async function stat(url) {
  const [self] = (await propfind(url, 0, selfProps, "read it")).map(toEntry);
  return self;
}

/**
 * listTrash returns a page of the items in a space's trash, newest first:
 * up to limit after the item keyed after ("" for the newest), and whether
 * more follow (a full page), so that a trash of any size opens at once.
 */
export async function listTrash(trashURL, { limit = 200, after = "" } = {}) {
  const [, ...items] = await propfind(trashPageURL(trashURL, { limit, after }), 1, trashProps, "open the trash");
  return { items: items.map(toTrashItem), more: items.length === limit };
}

/** destination is the Destination header for path on this origin. */
export function destination(path) {
  return new URL(path, location.origin).href;
}

export function makeFolder(url) {
  return send("MKCOL", url, { action: "create the folder" });
}

export function move(from, to, action) {
  return send("MOVE", from, { headers: { Destination: destination(to), Overwrite: "F" }, action });
}

export function remove(url, action) {
  return send("DELETE", url, { action });
}

/**
 * drives returns the user's spaces as Graph lists them, or, with a
 * driveType, the drives of that type ("virtual": the Shares drive of what
 * others shared with the user, which an unfiltered listing leaves out).
 */
export async function drives(driveType) {
  const res = await send("GET", drivesURL(driveType), {
    headers: { Accept: "application/json" },
    action: "list your spaces",
  });
  return (await res.json()).value;
}

/** allDrives are the user's spaces and the Shares drive, when the server has one. */
export async function allDrives() {
  const [spaces, shares] = await Promise.all([drives(), drives("virtual").catch(() => [])]);
  return [...spaces, ...shares];
}

/**
 * saveAs downloads url as a file named name through send, for a page
 * signed in with a token, which a plain <a download> link cannot carry.
 * The whole file is held in the browser's memory (a Blob) until it is
 * saved.
 */
export async function saveAs(url, name) {
  const res = await send("GET", url, { action: `download “${name}”` });
  const blobURL = URL.createObjectURL(await res.blob());
  // Not in the document: the click must not reach the page's own link
  // handling, which would download it again.
  Object.assign(document.createElement("a"), { href: blobURL, download: name }).click();
  // The download has started by then; the URL only keeps the Blob alive.
  setTimeout(() => URL.revokeObjectURL(blobURL), 60_000);
}
