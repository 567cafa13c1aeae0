// Unit tests of davwire.js: node --test, run by webui's TestScripts.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  basic, drivesURL, encodePath, errorMessage, escapeXML, isCollection, lastSegment, looksLikeXMLError, propfindBody,
  rangeTotal, readMultistatus, RequestError, searchBody, text, toEntry, toTrashItem, trashPageURL,
} from "../assets/davwire.js";
import { d, doc, el, oc, propstat, response, SABRE } from "./fakedom.js";

describe("RequestError", () => {
  const cases = [
    { status: 0, action: "open the folder", want: "Could not open the folder: the server cannot be reached. Check your connection and try again." },
    { status: 403, action: "delete it", want: "Could not delete it: your role in this space does not allow it." },
    { status: 412, action: "rename it", want: "Could not rename it: something with that name is already there." },
    { status: 405, action: "create the folder", want: "Could not create the folder: something with that name is already there." },
    { status: 400, action: "search", message: "bad pattern", want: "Could not search: the server refused the request (bad pattern)." },
    { status: 415, want: "the server refused the request." },
    { status: 507, action: "upload it", want: "Could not upload it: the space is full (its quota is reached). Empty the trash or delete something first." },
    { status: 504, want: "the server failed (504). Try again later." },
    { status: 418, message: "teapot", want: "the server refused it (418: teapot)." },
    { status: 429, want: "the server refused it (429)." },
  ];
  for (const { status, message = "", action, want } of cases) {
    it(`says what ${status} means`, () => {
      const err = new RequestError(status, message, action);
      assert.equal(err.message, want);
      assert.equal(err.status, status);
      assert.equal(err.serverMessage, message);
      assert.ok(err instanceof Error);
    });
  }
});

describe("basic", () => {
  it("encodes the user and password as UTF-8", () => {
    assert.equal(basic("public", "pässwörd:1"), `Basic ${Buffer.from("public:pässwörd:1", "utf8").toString("base64")}`);
    assert.equal(basic("einstein", "relativity"), "Basic ZWluc3RlaW46cmVsYXRpdml0eQ==");
  });
});

describe("errorMessage", () => {
  it("reads s:message", () => {
    const body = doc(d("error", el(SABRE, "exception", "Sabre\\DAV\\Exception\\Forbidden"), el(SABRE, "message", "  read only  ")));
    assert.equal(errorMessage(body), "read only");
  });
  it("is empty without one", () => {
    assert.equal(errorMessage(doc(d("error", d("lock-token-submitted")))), "");
  });
  it("looks only at XML bodies", () => {
    assert.ok(looksLikeXMLError(`<?xml version="1.0"?><d:error/>`));
    assert.ok(looksLikeXMLError(`<d:error xmlns:d="DAV:"/>`));
    assert.ok(!looksLikeXMLError("Forbidden\n"));
    assert.ok(!looksLikeXMLError(""));
  });
});

describe("propfindBody", () => {
  it("names each property with its prefix", () => {
    assert.equal(propfindBody([["d", "resourcetype"], ["oc", "size"]]),
      `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">` +
      "<d:prop><d:resourcetype/><oc:size/></d:prop></d:propfind>");
  });
});

describe("searchBody", () => {
  it("escapes the pattern and pages", () => {
    const body = searchBody(`<a & "b">'`, [["d", "getetag"]], { limit: 100, offset: 200 });
    assert.equal(body,
      `<?xml version="1.0" encoding="utf-8"?><oc:search-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">` +
      "<d:prop><d:getetag/></d:prop><oc:search><oc:pattern>&#60;a &#38; &#34;b&#34;&#62;&#39;</oc:pattern>" +
      "<oc:limit>100</oc:limit><oc:offset>200</oc:offset></oc:search></oc:search-files>");
  });
});

describe("escapeXML", () => {
  const cases = [
    ["plain", "plain"],
    ["", ""],
    ["a<b>c", "a&#60;b&#62;c"],
    ["&amp;", "&#38;amp;"],
    [`'"`, "&#39;&#34;"],
    ["Grüße ✓", "Grüße ✓"],
  ];
  for (const [input, want] of cases) {
    it(JSON.stringify(input), () => assert.equal(escapeXML(input), want));
  }
});

describe("rangeTotal", () => {
  const cases = [
    { range: "rows 0-99/1234", offset: 0, count: 100, want: 1234 },
    { range: "rows 100-149/150", offset: 100, count: 50, want: 150 },
    { range: null, offset: 100, count: 7, want: 107 },
    { range: "", offset: 0, count: 0, want: 0 },
    { range: "rows 0-9/*", offset: 0, count: 10, want: 10 },
  ];
  for (const { range, offset, count, want } of cases) {
    it(`${range} from ${offset}`, () => assert.equal(rangeTotal(range, offset, count), want));
  }
});

describe("readMultistatus", () => {
  const listing = doc(d("multistatus",
    response("/dav/spaces/s1/Folder%20a/",
      propstat("200 OK", d("resourcetype", d("collection")), oc("size", "1200"), oc("permissions", "RDNVCKP"), oc("spaceid", "s1")),
      propstat("404 Not Found", oc("favorite"), d("getetag"))),
    response("/dav/spaces/s1/Folder%20a/r%C3%A9sum%C3%A9%20%231.pdf",
      propstat("200 OK", d("resourcetype"), oc("size", "48000"), d("getlastmodified", "Tue, 03 Mar 2026 10:00:00 GMT"),
        oc("favorite", "1"), d("getetag", `"abc"`), oc("fileid", "s1!n7"))),
    el("urn:other", "response", d("href", "/ignored")),
    d("response", d("href", "/dav/spaces/s1/Folder%20a/sub/"), el("urn:other", "href", "/not/this"),
      propstat("200 OK", d("resourcetype", d("collection")), oc("favorite", "0")))));

  it("reads each d:response, props of 200 only", () => {
    const responses = readMultistatus(listing);
    assert.deepEqual(responses.map((r) => r.href), [
      "/dav/spaces/s1/Folder%20a/",
      "/dav/spaces/s1/Folder%20a/r%C3%A9sum%C3%A9%20%231.pdf",
      "/dav/spaces/s1/Folder%20a/sub/",
    ]);
    const [self] = responses;
    assert.deepEqual(Object.keys(self.props).sort(), ["permissions", "resourcetype", "size", "spaceid"]);
    assert.equal(text(self.props, "permissions"), "RDNVCKP");
    assert.equal(text(self.props, "favorite"), "");
  });

  it("turns responses into entries", () => {
    const [folder, file, sub] = readMultistatus(listing).map(toEntry);
    assert.deepEqual(folder, {
      href: "/dav/spaces/s1/Folder%20a/", name: "Folder a", folder: true, size: 1200, modified: null,
      permissions: "RDNVCKP", fileId: "", spaceId: "s1", favorite: false, etag: "",
    });
    assert.deepEqual(file, {
      href: "/dav/spaces/s1/Folder%20a/r%C3%A9sum%C3%A9%20%231.pdf", name: "résumé #1.pdf", folder: false, size: 48000,
      modified: new Date("2026-03-03T10:00:00Z"), permissions: "", fileId: "s1!n7", spaceId: "", favorite: true, etag: `"abc"`,
    });
    assert.equal(sub.name, "sub");
    assert.equal(sub.folder, true);
    assert.equal(sub.favorite, false);
    assert.equal(sub.size, 0);
  });

  it("takes a propstat without a status as found", () => {
    const [r] = readMultistatus(doc(d("multistatus", response("/x", d("propstat", d("prop", oc("size", "5")))))));
    assert.equal(text(r.props, "size"), "5");
  });
});

describe("isCollection", () => {
  it("needs a d:collection in d:resourcetype", () => {
    assert.equal(isCollection({ resourcetype: d("resourcetype", d("collection")) }), true);
    assert.equal(isCollection({ resourcetype: d("resourcetype") }), false);
    assert.equal(isCollection({ resourcetype: d("resourcetype", oc("collection")) }), false);
    assert.equal(isCollection({}), false);
  });
});

describe("toTrashItem", () => {
  it("reads where and when an item was deleted", () => {
    const [item] = readMultistatus(doc(d("multistatus", response("/dav/spaces/trash-bin/s1/n9%2Fkey/",
      propstat("200 OK", d("resourcetype", d("collection")), oc("size", "10"),
        oc("trashbin-original-filename", "old notes"), oc("trashbin-original-location", "lab/old notes"),
        oc("trashbin-delete-timestamp", "1767225600")))))).map(toTrashItem);
    assert.deepEqual(item, {
      href: "/dav/spaces/trash-bin/s1/n9%2Fkey/", key: "n9/key", name: "old notes", location: "lab/old notes",
      deleted: new Date("2026-01-01T00:00:00Z"), folder: true, size: 10,
    });
  });
});

describe("lastSegment", () => {
  const cases = [
    ["/dav/spaces/s1/a/b.txt", "b.txt"],
    ["/dav/spaces/s1/a/folder/", "folder"],
    ["/dav/spaces/s1/a/folder//", "folder"],
    ["/webdav/100%25%20sure%3F", "100% sure?"],
    ["/webdav/%E6%97%A5%E6%9C%AC", "日本"],
  ];
  for (const [href, want] of cases) {
    it(href, () => assert.equal(lastSegment(href), want));
  }
});

describe("encodePath", () => {
  const cases = [
    [[], ""],
    [["a"], "a"],
    [["a b", "c/d", "100%", "x?y#z"], "a%20b/c%2Fd/100%25/x%3Fy%23z"],
    [["日本"], "%E6%97%A5%E6%9C%AC"],
  ];
  for (const [segments, want] of cases) {
    it(JSON.stringify(segments), () => assert.equal(encodePath(segments), want));
  }
});

describe("drivesURL", () => {
  it("filters by type when asked", () => {
    assert.equal(drivesURL(), "/graph/v1.0/me/drives");
    assert.equal(drivesURL("virtual"), "/graph/v1.0/me/drives?$filter=driveType%20eq%20virtual");
  });
});

describe("trashPageURL", () => {
  const trash = "/dav/spaces/trash-bin/s%24p";
  const cases = [
    { page: { limit: 200 }, want: `${trash}?limit=200` },
    { page: { limit: 200, after: "" }, want: `${trash}?limit=200` },
    { page: { limit: 50, after: "1764000000000000000.n1" }, want: `${trash}?limit=50&after=1764000000000000000.n1` },
    { page: { limit: 5, after: "1.a b&c" }, want: `${trash}?limit=5&after=1.a+b%26c` },
  ];
  for (const { page, want } of cases) {
    it(`pages ${JSON.stringify(page)}`, () => {
      assert.equal(trashPageURL(trash, page), want);
    });
  }
});
