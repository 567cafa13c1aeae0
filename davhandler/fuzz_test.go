package davhandler

import (
	"bytes"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
)

// wantClientError fails unless err is nil or a protocol error with a 4xx
// status (or one of the extra statuses).
func wantClientError(t *testing.T, err error, extra ...int) {
	t.Helper()
	if err == nil {
		return
	}
	var de *davError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a davError", err, err)
	}
	for _, s := range extra {
		if de.status == s {
			return
		}
	}
	if de.status < 400 || de.status >= 500 {
		t.Fatalf("status %d for %v, want 4xx", de.status, err)
	}
}

// wantValidSegments checks what a parser let through.
func wantValidSegments(t *testing.T, dp davPath) {
	t.Helper()
	for _, s := range append([]string{dp.user, dp.ref, dp.upload}, dp.segments...) {
		if s == "" {
			continue
		}
		if err := validateName(s); err != nil {
			t.Fatalf("segment %q passed but is invalid: %v", s, err)
		}
	}
}

var pathSeeds = []string{
	"/webdav/a/b.txt", "/remote.php/webdav/", "/dav/files/einstein/x", "/remote.php/dav/spaces/S$P!N/x",
	"/dav/spaces/", "/dav/unknown", "/webdav/../etc", "/webdav/a//b/", "/webdav/a\\b", "/webdav/\xff",
	"/webdav/\uFFFE", "/dav/spaces/\xed\xa0\x80", "/remote.php", "/remote.phpx/webdav", "/dav/files/./x",
	"/dav/spaces/trash-bin/S$P/1.N/a", "/dav/spaces/trash-bin/", "/dav/spaces/trash-bin/$", "/dav/meta/S$P!N/v/1.0",
	"/remote.php/dav/meta/$!/v", "/dav/meta/S$P!N/x",
}

// chunkedPathSeeds are chunked uploads' paths: NG uploads, their parts and
// .file, and v1 chunks' names, well formed or not.
var chunkedPathSeeds = []string{
	"/remote.php/dav/uploads/einstein/1001/", "/remote.php/dav/uploads/einstein/1001/00001",
	"/dav/uploads/einstein/1001/.file", "/dav/uploads/einstein/1001/.file/x", "/dav/uploads/EINSTEIN/1001/00002",
	"/dav/uploads/marie/1001/00001", "/dav/uploads/einstein//00001", "/dav/uploads/einstein/../1001",
	"/dav/uploads/einstein/1001/..", "/dav/uploads/einstein/1001/00001/00002", "/dav/uploads/", "/dav/uploads/einstein",
	"/dav/uploads/einstein/web-file-upload-0123456789abcdef-1700000000000/0-1048576",
	"/webdav/big.bin-chunking-4711-3-0", "/remote.php/webdav/a/b.bin-chunking-1-9999-9998",
	"/webdav/-chunking-x-1-0", "/webdav/f-chunking--1-0", "/webdav/f-chunking-1-99999999999999999999-0",
	"/webdav/f-chunking-1-2-2", "/webdav/f-chunking-\xff-2-0", "/webdav/.file-chunking-1-1-0",
}

func FuzzParseDAVPath(f *testing.F) {
	for _, s := range append(pathSeeds, chunkedPathSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		dp, ok, err := parseDAVPath(p)
		if err != nil {
			wantClientError(t, err)
			return
		}
		if !ok {
			return
		}
		wantValidSegments(t, dp)
		if href := escapePath(dp.base + "/" + strings.Join(dp.segments, "/")); !utf8Printable(href) {
			t.Fatalf("href %q is not printable ASCII", href)
		}
	})
}

// utf8Printable reports whether s is printable ASCII, as an escaped href is.
func utf8Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// FuzzRequestPath sends read-only requests for fuzzed paths and resource ids
// through the handler: nothing is a server error, and every body parses.
// An NG upload with parts exists, so that its listings are reached, and
// so do a deleted folder in the trash and a file with a version.
func FuzzRequestPath(f *testing.F) {
	e := newEnv(f, withChunks)
	wantStatus(f, e.do("einstein", "MKCOL", "/webdav/folder", ""), http.StatusCreated)
	wantStatus(f, e.do("einstein", "PUT", "/webdav/folder/f.txt", "content"), http.StatusCreated)
	ngUpload(f, e, "1001", "00001", "hello ", "00002", "world")
	space := strings.TrimPrefix(e.personalSpacePath("einstein"), "/dav/spaces/")
	e.mkcol("einstein", "/webdav", "gone")
	e.putFile("einstein", "/webdav/gone/g.txt", "g")
	wantStatus(f, e.do("einstein", "DELETE", "/webdav/gone", ""), http.StatusNoContent)
	trash := trashPath(e.personalSpaceID("einstein"))
	key := trashKey(f, e.listTrash("einstein", trash)[1].Href)
	versioned := e.putFile("einstein", "/webdav/v.txt", "1")
	e.putFile("einstein", "/webdav/v.txt", "2")
	versionKey := path.Base(e.listVersions("einstein", versioned)[1].Href)
	for _, p := range []string{trash, trash + "/" + key, trash + "/" + key + "/g.txt", trash + "/" + key + "/nope", trash + "/nokey",
		"/dav/meta/" + versioned, "/dav/meta/" + versioned + "/v", "/dav/meta/" + versioned + "/v/" + versionKey} {
		for m := range uint8(4) {
			f.Add("", p, m)
		}
	}
	for _, ref := range []string{space, testStorageID + "$physics", "physics", "other$physics", space + "!nope", "$!", "!", "$", space + "!" + space} {
		f.Add(ref, "folder/f.txt", uint8(0))
		f.Add(ref, "", uint8(1))
	}
	for _, s := range pathSeeds {
		f.Add("", s, uint8(2))
	}
	for _, s := range chunkedPathSeeds {
		f.Add("", s, uint8(0))
	}
	methods := []string{"PROPFIND", "GET", "HEAD", "OPTIONS"}
	f.Fuzz(func(t *testing.T, ref, rest string, method uint8) {
		p := "/dav/spaces/" + ref + "/" + rest
		if ref == "" {
			p = rest
		}
		r := &http.Request{
			Method: methods[int(method)%len(methods)], URL: &url.URL{Path: p}, RequestURI: p,
			Header: http.Header{"Depth": {"1"}}, Body: http.NoBody, Host: "example.com",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		}
		r.SetBasicAuth("einstein", "x")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d\n%s", r.Method, p, rec.Code, rec.Body.String())
		}
		if err := wellFormed(rec.Body.Bytes()); rec.Code != http.StatusOK && err != nil {
			t.Fatalf("%s %q: %d body does not parse: %v\n%s", r.Method, p, rec.Code, err, rec.Body.String())
		}
	})
}

// documentShape counts the elements of doc that no element holds (the
// roots of a document, or of a value's fragment) and how deeply elements
// nest, with encoding/xml alone.
func documentShape(doc []byte) (roots, depth int) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	open := 0
	for {
		tok, err := dec.RawToken()
		if err != nil {
			return roots, depth
		}
		switch tok.(type) {
		case xml.StartElement:
			if open == 0 {
				roots++
			}
			open++
			depth = max(depth, open)
		case xml.EndElement:
			open--
		}
	}
}

// wellFormed reads a whole document with encoding/xml and with the
// checks request bodies get. An empty body passes.
func wellFormed(doc []byte) error {
	if len(doc) == 0 {
		return nil
	}
	if err := checkDocument(doc); err != nil {
		return err
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		if _, err := dec.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

var xmlSeeds = []string{
	`<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><oc:fileid xmlns:oc="http://owncloud.org/ns"/></d:prop></d:propfind>`,
	`<d:propfind xmlns:d="DAV:"><d:allprop/><d:include><x:p xmlns:x="urn:x"/></d:include></d:propfind>`,
	`<propfind xmlns="DAV:"><propname/></propfind>`,
	`<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p a="1">v<bare/><d:href>h</d:href></x:p></d:prop></d:set><d:remove><d:prop><x:q/></d:prop></d:remove></d:propertyupdate>`,
	`<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><p xmlns="urn:x"><c><b xmlns="" xml:lang="en">&#xFFFE;&#0;<![CDATA[x]]></b></c></p></d:prop></d:set></d:propertyupdate>`,
	`<d:propertyupdate xmlns:d="DAV:" xmlns:y="urn:x"><d:set><d:prop><x:p xmlns:x="urn:x" x:a="1" y:a="2"/></d:prop></d:set></d:propertyupdate>`,
	`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "v">]><d:propfind xmlns:d="DAV:">&e;</d:propfind>`,
}

func FuzzParsePropfind(f *testing.F) {
	for _, s := range xmlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pf, err := parsePropfind(body)
		wantClientError(t, err)
		if err == nil && body != nil {
			if roots, depth := documentShape(bytes.TrimPrefix(body, []byte(byteOrderMark))); roots != 1 || depth > maxDocumentDepth {
				t.Fatalf("accepted a body of %d root elements, %d deep", roots, depth)
			}
		}
		for _, n := range pf.names {
			if len(n.Local) > maxPropNameBytes || len(n.Space) > maxPropNameBytes {
				t.Fatalf("name %q passed the cap", n)
			}
		}
	})
}

// FuzzParseProppatch checks that whatever PROPPATCH accepts is stored in a
// form that a multistatus carries well-formed and that reads back the same.
func FuzzParseProppatch(f *testing.F) {
	for _, s := range xmlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pp, err := parseProppatch(body)
		wantClientError(t, err)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		ms := davxml.StartMultistatus(rec, davxml.MultistatusBuffer, nil)
		ms.BeginResponse("/webdav/f")
		ms.BeginPropstat()
		for _, p := range pp.patches {
			ms.RawElement(xml.Name{Space: p.Name.Space, Local: p.Name.Local}, p.Value)
		}
		ms.EndPropstat(http.StatusOK)
		ms.EndResponse()
		ms.Close()
		if err := wellFormed(rec.Body.Bytes()); err != nil {
			t.Fatalf("multistatus does not parse: %v\n%s", err, rec.Body.String())
		}
		for _, p := range pp.patches {
			if _, depth := documentShape([]byte(p.Value)); depth > maxValueDepth {
				t.Fatalf("stored a value %d elements deep", depth)
			}
			again := `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:p xmlns:x="urn:fuzz">` + p.Value + `</x:p></d:prop></d:set></d:propertyupdate>`
			pp2, err := parseProppatch([]byte(again))
			if err != nil {
				t.Fatalf("stored value %q does not parse again: %v", p.Value, err)
			}
			if pp2.patches[0].Value != p.Value {
				t.Fatalf("stored value %q reads back as %q", p.Value, pp2.patches[0].Value)
			}
		}
	})
}

func FuzzParseMtime(f *testing.F) {
	for _, s := range []string{"1500000000", "1500000000.5", "NaN", "Inf", "-Inf", "1e400", "0x1p30", "253402300799", "253402300800", "1.", ".1", "00001.000000000001", "+1", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := &http.Request{Header: http.Header{"X-Oc-Mtime": {v}}}
		mtime, err := parseMtime(r)
		wantClientError(t, err)
		if err != nil || mtime.IsZero() {
			return
		}
		if mtime.Before(time.Unix(0, 0)) || mtime.Year() > 9999 {
			t.Fatalf("%q gave %v", v, mtime)
		}
		if _, err := http.ParseTime(mtime.Format(http.TimeFormat)); err != nil {
			t.Fatalf("%q gave %v, which HTTP cannot carry: %v", v, mtime, err)
		}
	})
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"http://example.com/webdav/b", "/dav/spaces/S$P!N/x", "https://other/webdav/x", "/webdav/a%5Cb", "/webdav/%FE", "http://example.com/index.html", "::", "http://[::1/", "/dav/files/%2e%2e/x", "/webdav/a%00b",
		"/remote.php/dav/uploads/einstein/1001/.file", "http://example.com/dav/uploads/einstein/1001/00001", "/dav/uploads/1001",
		"http://example.com/remote.php/dav/files/einstein/big.bin", "/webdav/big.bin-chunking-4711-3-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dest string) {
		r := &http.Request{Host: "example.com", Header: http.Header{"Destination": {dest}}}
		dp, err := parseDestination(r)
		// 502 is the answer for a Destination on another server.
		wantClientError(t, err, http.StatusBadGateway)
		if err == nil {
			wantValidSegments(t, dp)
		}
	})
}

func FuzzParseDepth(f *testing.F) {
	for _, s := range []string{"0", "1", "infinity", "Infinity", " 1 ", "2", "-1", "", "1,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := &http.Request{Header: http.Header{"Depth": {v}}}
		d, err := parseDepth(r, depthInfinity)
		wantClientError(t, err)
		if err == nil && d != 0 && d != 1 && d != depthInfinity {
			t.Fatalf("Depth %q gave %d", v, d)
		}
	})
}

func FuzzETagList(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc"`, `*`, `"a,bc", W/"x"`, ` ,"abc",`, `"abc`, `W/`, `"a b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		l, err := parseETagList(v)
		wantClientError(t, err)
		if err != nil {
			return
		}
		if l.matches("abc", true) && !l.matches("abc", false) {
			t.Fatalf("%q matches strongly but not weakly", v)
		}
	})
}

// FuzzParseIfHeader checks that the If header parser answers anything with a
// parse or a 400, and that what it parses writes back to the same header.
func FuzzParseIfHeader(f *testing.F) {
	for _, form := range ifHeaderForms {
		f.Add(form.in)
	}
	for _, s := range malformedIfHeaders {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ih, err := parseIfHeader(v)
		if err != nil {
			wantClientError(t, err)
			return
		}
		canonical := formatIfHeader(ih)
		again, err := parseIfHeader(canonical)
		if err != nil {
			t.Fatalf("%q parsed to %q, which does not parse back: %v", v, canonical, err)
		}
		if got := formatIfHeader(again); got != canonical {
			t.Fatalf("%q parsed to %q, written back and parsed to %q", v, canonical, got)
		}
	})
}

// formatIfHeader writes a parsed If header in its canonical form.
func formatIfHeader(ih davxml.IfHeader) string {
	var b strings.Builder
	tag := ""
	for _, l := range ih.Lists {
		if l.ResourceTag != tag {
			tag = l.ResourceTag
			b.WriteString("<" + tag + "> ")
		}
		b.WriteString("(")
		for i, c := range l.Conditions {
			if i > 0 {
				b.WriteString(" ")
			}
			if c.Not {
				b.WriteString("Not ")
			}
			if c.Token != "" {
				b.WriteString("<" + c.Token + ">")
			} else {
				b.WriteString("[" + c.ETag + "]")
			}
		}
		b.WriteString(") ")
	}
	return b.String()
}

func FuzzParseTusMetadata(f *testing.F) {
	for _, s := range []string{
		"filename YS50eHQ=", "filename YS50eHQ=,mtime MTcwMDAwMDAwMA==,checksum U0hBMSAxMjM=", " filename YQ , flag ,",
		"filename", "filename !!!", "filename YQ==,filename Yg==", "filename Li4=", "filename YS9i", "filename L2EvYi9j", "filename YS8vYg==", "type dGV4dC8=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		m, err := parseTusMetadata(header)
		wantClientError(t, err)
		if err != nil {
			return
		}
		if len(m.segments) == 0 {
			t.Fatalf("%q: no name passed", header)
		}
		for _, name := range m.segments {
			if name == "" || strings.Contains(name, "/") || validateName(name) != nil {
				t.Fatalf("%q: name %q passed", header, name)
			}
		}
		if m.expected != nil && len(m.expected.Digest) == 0 {
			t.Fatalf("%q: empty checksum passed", header)
		}
	})
}

func FuzzParseUploadChecksum(f *testing.F) {
	for _, s := range []string{
		"md5 gnzLDuqKcGxMNKFokfhOew==", "sha1 jLIjfQZ5yojbZGTqxg2pY0VROWQ=", "adler32 AvgBAA==", "adler32 02f80100",
		"MD5 827ccb0eea8a706c4c34a16891f84e7b", "crc32 AAAAAA==", "md5", "md5 ", " md5  x ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		e, err := parseUploadChecksum(header)
		wantClientError(t, err)
		if err != nil || e == nil {
			return
		}
		if _, err := hex.DecodeString(e.Digest); err != nil || e.Digest == "" {
			t.Fatalf("%q: digest %q is no hex", header, e.Digest)
		}
	})
}

func FuzzParseTotalLength(f *testing.F) {
	for _, s := range []string{"", "0", "19", "005", "-1", "+5", " 5", "5 ", "1e3", "0x10", "9223372036854775807", "9223372036854775808", "\u0663", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := &http.Request{Header: http.Header{"Oc-Total-Length": {v}}}
		n, err := parseTotalLength(r)
		wantClientError(t, err)
		switch {
		case err != nil:
		case v == "" && n != -1:
			t.Fatalf("no OC-Total-Length gave %d, want -1", n)
		case v != "" && (n < 0 || strings.TrimLeft(v, "0") != strings.TrimLeft(strconv.FormatInt(n, 10), "0")):
			t.Fatalf("OC-Total-Length %q gave %d", v, n)
		}
	})
}

func FuzzParseV1Chunk(f *testing.F) {
	for _, s := range []string{
		"big.bin-chunking-4711-3-0", "a-chunking-b-chunking-1-2-1", "f-chunking-1-9999-9998", "f-chunking-1-10000-0",
		"f-chunking-1-2-2", "f-chunking-1-0-0", "f-chunking-x y-2-0", "-chunking-1-1-0", "..-chunking-1-1-0",
		"f-chunking-1-99999999999999999999-0", "f-chunking-1-02-01", "f-chunking-\u00e9-2-0", "f.txt",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, err := parseV1Chunk(name)
		wantClientError(t, err)
		if err != nil {
			return
		}
		if c.count < 1 || c.count > maxV1Chunks || c.index < 0 || c.index >= c.count {
			t.Fatalf("%q: chunk %d of %d passed", name, c.index, c.count)
		}
		if validateName(c.file) != nil || c.transfer == "" || !strings.HasPrefix(name, c.file+"-chunking-"+c.transfer+"-") {
			t.Fatalf("%q: file %q, transfer %q passed", name, c.file, c.transfer)
		}
	})
}
