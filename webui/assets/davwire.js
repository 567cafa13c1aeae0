// What dav.js sends and reads, without sending anything: the XML bodies of
// its requests, the reading of a multistatus into entries, the words for a
// refusal and the escaping of paths. Nothing here touches the network, the
// page or the sign-in, so that node --test runs it as it is (the tests are
// in webui/testdata); a parsed document comes in from the caller.

export const DAV = "DAV:";
export const OC = "http://owncloud.org/ns";
const SABRE = "http://sabredav.org/ns";

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

/** basic is the Authorization header of Basic credentials, the user and password as UTF-8. */
export function basic(user, password) {
  let binary = "";
  for (const byte of new TextEncoder().encode(`${user}:${password}`)) {
    binary += String.fromCharCode(byte);
  }
  return `Basic ${btoa(binary)}`;
}

/** looksLikeXMLError tells whether an error body is worth parsing for a WebDAV error's message. */
export function looksLikeXMLError(body) {
  return body.startsWith("<?xml") || body.startsWith("<d:error");
}

/** errorMessage reads the s:message of a parsed WebDAV XML error body, "" when it has none. */
export function errorMessage(doc) {
  const msg = doc.getElementsByTagNameNS(SABRE, "message")[0];
  return msg ? msg.textContent.trim() : "";
}

function propNames(props) {
  return props.map(([ns, name]) => `<${ns}:${name}/>`).join("");
}

/** propfindBody asks for props, each [prefix, name] with prefix d (DAV:) or oc. */
export function propfindBody(props) {
  return `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop>${propNames(props)}</d:prop></d:propfind>`;
}

/** searchBody is a REPORT oc:search-files for names holding pattern, a page of limit from offset. */
export function searchBody(pattern, props, { limit, offset }) {
  return `<?xml version="1.0" encoding="utf-8"?><oc:search-files xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop>${propNames(props)}</d:prop>` +
    `<oc:search><oc:pattern>${escapeXML(pattern)}</oc:pattern><oc:limit>${limit}</oc:limit><oc:offset>${offset}</oc:offset></oc:search></oc:search-files>`;
}

/** escapeXML makes s safe as XML text or an attribute's value. */
export function escapeXML(s) {
  return s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * rangeTotal is the number of matches in all a search's Content-Range
 * header names (rows first-last/total), or offset + count when it names
 * none.
 */
export function rangeTotal(contentRange, offset, count) {
  const range = /\/(\d+)$/.exec(contentRange || "");
  return range ? Number(range[1]) : offset + count;
}

/** readMultistatus reads a parsed d:multistatus into its responses, each { href, props }. */
export function readMultistatus(doc) {
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

/** toEntry is a file or folder of a listing, from its response. */
export function toEntry({ href, props }) {
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

/** toTrashItem is an item of a trash listing, from its response. */
export function toTrashItem({ href, props }) {
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

/**
 * trashPageURL is the URL of a page of the trash at trashURL: limit items
 * after the item keyed after ("" for the newest).
 */
export function trashPageURL(trashURL, { limit, after = "" }) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (after) {
    query.set("after", after);
  }
  return `${trashURL}?${query}`;
}

/** drivesURL is Graph's listing of the user's drives, of one driveType when given. */
export function drivesURL(driveType) {
  const filter = driveType ? `?$filter=${encodeURIComponent(`driveType eq ${driveType}`)}` : "";
  return `/graph/v1.0/me/drives${filter}`;
}

/** encodePath escapes each segment of a path. */
export function encodePath(segments) {
  return segments.map(encodeURIComponent).join("/");
}
