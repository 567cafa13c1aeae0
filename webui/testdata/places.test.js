// Unit tests of places.js: node --test, run by webui's TestScripts.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { folderURL, parseLocation, segmentsBelow, spaceOf, spaceTitle } from "../assets/places.js";

describe("parseLocation", () => {
  const cases = [
    ["/webdav", { base: "/webdav", segments: [] }],
    ["/webdav/", { base: "/webdav", segments: [] }],
    ["/remote.php/webdav/a%20b/c/", { base: "/remote.php/webdav", segments: ["a b", "c"] }],
    ["/dav/files/einstein/lab", { base: "/dav/files/einstein", segments: ["lab"] }],
    ["/remote.php/dav/spaces/s%241!n2/x%2Fy/", { base: "/remote.php/dav/spaces/s%241!n2", segments: ["x/y"] }],
    ["/dav/spaces/s1//deep///", { base: "/dav/spaces/s1", segments: ["deep"] }],
    ["/", null],
    ["/dav/files/", null],
    ["/dav/spaces", null],
    ["/s/token", null],
    ["/webdavx", null],
  ];
  for (const [pathname, want] of cases) {
    it(pathname, () => assert.deepEqual(parseLocation(pathname), want));
  }
});

describe("segmentsBelow", () => {
  const cases = [
    { base: "/dav/spaces/s1", href: "/dav/spaces/s1/a/b%20c.txt", want: ["a", "b c.txt"] },
    { base: "/dav/spaces/s1", href: "/dav/spaces/s1/", want: [] },
    // A search answers hrefs under another base of the same space.
    { base: "/webdav", href: "/dav/spaces/s1/lab/notes.txt", want: ["lab", "notes.txt"] },
    { base: "/webdav", href: "/elsewhere/x", want: [] },
  ];
  for (const { base, href, want } of cases) {
    it(`${href} below ${base}`, () => assert.deepEqual(segmentsBelow(base, href), want));
  }
});

describe("folderURL", () => {
  it("escapes each name and ends with a slash", () => {
    assert.equal(folderURL("/dav/spaces/s1", []), "/dav/spaces/s1/");
    assert.equal(folderURL("/dav/spaces/s1", ["a b", "100%", "c/d"]), "/dav/spaces/s1/a%20b/100%25/c%2Fd/");
  });
  it("is the inverse of parseLocation", () => {
    const segments = ["Grüße", "a#b", "?"];
    assert.deepEqual(parseLocation(folderURL("/webdav", segments)), { base: "/webdav", segments });
  });
});

describe("spaceOf", () => {
  const drives = [
    { id: "p1", driveType: "project", name: "Physics" },
    { id: "me$1", driveType: "personal", name: "Einstein" },
  ];
  const cases = [
    ["/webdav", "me$1"],
    ["/dav/files/einstein", "me$1"],
    ["/dav/spaces/p1", "p1"],
    ["/dav/spaces/me%241", "me$1"],
    ["/dav/spaces/gone", undefined],
  ];
  for (const [base, want] of cases) {
    it(base, () => assert.equal(spaceOf(drives, base)?.id, want));
  }
});

describe("spaceTitle", () => {
  const cases = [
    [undefined, "Space"],
    [{ driveType: "personal", name: "Einstein" }, "Personal"],
    [{ driveType: "virtual", name: "Shares" }, "Shared with me"],
    [{ driveType: "project", name: "Physics" }, "Physics"],
  ];
  for (const [drive, want] of cases) {
    it(want, () => assert.equal(spaceTitle(drive), want));
  }
});
