// The server's endpoints as the page uses them: WebDAV (PROPFIND, MKCOL,
// MOVE, DELETE), the trash-bin and Graph's drives. Every request goes to
// the page's own origin with the browser's credentials (the Basic sign-in
// the browser prompted for) or, signed in with OpenID Connect, the access
// token (auth.js); on a public link's page, with none but the link's
// password (usePublicLink).

import { authorization } from "./auth.js";

const DAV = "DAV:";
const OC = "http://owncloud.org/ns";

/** A refusal of the server, with the words to show a person. */
export class RequestError extends Error {
  constructor(status, serverMessage, action) {
    super(explain(status, serverMessage, action));
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

// What a refused action means, by status. The server's own message is
// added where the status alone says too little.
function explain(status, serverMessage, action) {
  const what = action ? `Could not ${action}: ` : "";
  switch (status) {
    case 0:
      return `${what}the server cannot be reached. Check your connection and try again.`;
    case 401:
      return `${what}you are signed out. Reload the page to sign in again.`;
    case 403:
      return `${what}your role in this space does not allow it.`;
    case 404:
      return `${what}it is not there any more (moved or deleted meanwhile?). Reload the page to see the folder as it is now.`;
    case 405:
    case 412:
      return `${what}something with that name is already there.`;
    case 409:
      return `${what}the folder it would go into does not exist any more.`;
    case 413:
      return `${what}it is too large for the server.`;
    case 415:
    case 400:
      return `${what}the server refused the request${serverMessage ? ` (${serverMessage})` : ""}.`;
    case 423:
      return `${what}it is locked by someone who is working on it. Try again later.`;
    case 502:
      return `${what}it cannot go to another space this way.`;
    case 503:
      return `${what}the server is busy or its storage is unavailable. Try again in a moment.`;
    case 507:
      return `${what}the space is full (its quota is reached). Empty the trash or delete something first.`;
  }
  if (status >= 500) {
    return `${what}the server failed (${status}). Try again later.`;
  }
  return `${what}the server refused it (${status}${serverMessage ? `: ${serverMessage}` : ""}).`;
}

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

function basic(user, password) {
  let binary = "";
  for (const byte of new TextEncoder().encode(`${user}:${password}`)) {
    binary += String.fromCharCode(byte);
  }
  return `Basic ${btoa(binary)}`;
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
  if (!text.startsWith("<?xml") && !text.startsWith("<d:error")) {
    return "";
  }
  const doc = new DOMParser().parseFromString(text, "application/xml");
  const msg = doc.getElementsByTagNameNS("http://sabredav.org/ns", "message")[0];
  return msg ? msg.textContent.trim() : "";
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

function propfindBody(props) {
  const names = props.map(([ns, name]) => `<${ns}:${name}/>`).join("");
  return `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop>${names}</d:prop></d:propfind>`;
}

export async function propfind(url, depth, props, action) {
  const res = await send("PROPFIND", url, {
    headers: { Depth: String(depth), "Content-Type": "application/xml; charset=utf-8" },
    body: propfindBody(props),
    action,
  });
  const doc = new DOMParser().parseFromString(await res.text(), "application/xml");
  performance.mark("propfind-parsed");
  return Array.from(childElements(doc.documentElement, DAV, "response"), readResponse);
}

// childElements yields the children of el with a name; walking children
// directly keeps a listing of 10,000 responses fast, where a search of each
// subtree by name would not be.
export function* childElements(el, ns, name) {
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
    if (c.localName === name && c.namespaceURI === ns) {
      yield c;
    }
  }
}

// readResponse turns one d:response into its href and the properties of
// its 200 propstat, by local name.
function readResponse(response) {
  let href = "";
  const props = {};
  for (let c = response.firstElementChild; c; c = c.nextElementSibling) {
    if (c.namespaceURI !== DAV) {
      continue;
    }
    if (c.localName === "href") {
      href = c.textContent;
    } else if (c.localName === "propstat") {
      readPropstat(c, props);
    }
  }
  return { href, props };
}

function readPropstat(propstat, props) {
  const [status] = childElements(propstat, DAV, "status");
  if (status && !/ 200 /.test(status.textContent)) {
    return;
  }
  for (const prop of childElements(propstat, DAV, "prop")) {
    for (let el = prop.firstElementChild; el; el = el.nextElementSibling) {
      props[el.localName] = el;
    }
  }
}

export function text(props, name) {
  return props[name] ? props[name].textContent : "";
}

export function isCollection(props) {
  const rt = props.resourcetype;
  return !!rt && !childElements(rt, DAV, "collection").next().done;
}

// lastSegment is the decoded name at the end of an href.
export function lastSegment(href) {
  const parts = href.replace(/\/+$/, "").split("/");
  return decodeURIComponent(parts[parts.length - 1]);
}

function toEntry({ href, props }) {
  const folder = isCollection(props);
  const modified = text(props, "getlastmodified");
  return {
    href,
    name: lastSegment(href),
    folder,
    size: Number(text(props, "size") || 0),
    modified: modified ? new Date(modified) : null,
    permissions: text(props, "permissions"),
    fileId: text(props, "fileid"),
    spaceId: text(props, "spaceid"),
    favorite: text(props, "favorite") === "1",
    etag: text(props, "getetag"),
  };
}

/**
 * search finds the files and folders of a space whose names hold pattern
 * (REPORT oc:search-files at the space's root URL), a page of limit
 * results from offset, with the properties a listing shows, and the
 * number of matches in all (Content-Range: rows first-last/total; the
 * page's length when the server does not say).
 */
export async function search(rootURL, pattern, { limit = 100, offset = 0 } = {}) {
  const names = childProps.map(([ns, name]) => `<${ns}:${name}/>`).join("");
  const body = `<?xml version="1.0" encoding="utf-8"?><oc:search-files xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop>${names}</d:prop>` +
    `<oc:search><oc:pattern>${escapeXML(pattern)}</oc:pattern><oc:limit>${limit}</oc:limit><oc:offset>${offset}</oc:offset></oc:search></oc:search-files>`;
  const res = await send("REPORT", rootURL, {
    headers: { "Content-Type": "application/xml; charset=utf-8" },
    body,
    action: "search",
  });
  const doc = new DOMParser().parseFromString(await res.text(), "application/xml");
  const entries = Array.from(childElements(doc.documentElement, DAV, "response"), readResponse).map(toEntry);
  const range = /\/(\d+)$/.exec(res.headers.get("Content-Range") || "");
  return { entries, total: range ? Number(range[1]) : offset + entries.length };
}

function escapeXML(s) {
  return s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
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
  const query = new URLSearchParams({ limit: String(limit) });
  if (after) {
    query.set("after", after);
  }
  const [, ...items] = await propfind(`${trashURL}?${query}`, 1, trashProps, "open the trash");
  return { items: items.map(trashItem), more: items.length === limit };
}

// trashItem reads one item of a trash listing.
function trashItem({ href, props }) {
  return {
    href,
    key: lastSegment(href),
    name: text(props, "trashbin-original-filename"),
    location: text(props, "trashbin-original-location"),
    deleted: new Date(Number(text(props, "trashbin-delete-timestamp")) * 1000),
    folder: isCollection(props),
    size: Number(text(props, "size") || 0),
  };
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
  const filter = driveType ? `?$filter=${encodeURIComponent(`driveType eq ${driveType}`)}` : "";
  const res = await send("GET", `/graph/v1.0/me/drives${filter}`, {
    headers: { Accept: "application/json" },
    action: "list your spaces",
  });
  return (await res.json()).value;
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

/** encodePath escapes each segment of a path. */
export function encodePath(segments) {
  return segments.map(encodeURIComponent).join("/");
}
