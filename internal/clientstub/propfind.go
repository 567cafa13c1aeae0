package clientstub

import (
	"bufio"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// propfind lists a node (Depth 0) or a folder and its children (Depth 1)
// with the properties the sync clients read, whatever the body asks.
func (s *Server) propfind(w http.ResponseWriter, r *http.Request, dp davPath) {
	depth := r.Header.Get("Depth")
	if depth != "0" && depth != "1" {
		http.Error(w, "only Depth 0 and 1 are served", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookup(dp.user, dp.path)
	if n == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	out := bufio.NewWriter(w)
	defer out.Flush()
	out.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">`)
	writeResponse(out, dp.prefix, n)
	if depth == "1" && n.isDir() {
		for _, c := range n.children {
			writeResponse(out, dp.prefix, c)
		}
	}
	out.WriteString(`</d:multistatus>`)
}

// writeResponse writes one node's d:response.
func writeResponse(out *bufio.Writer, prefix string, n *node) {
	out.WriteString(`<d:response><d:href>`)
	out.WriteString(href(prefix, n))
	out.WriteString(`</d:href><d:propstat><d:prop>`)
	perm := filePerm
	if n.isDir() {
		perm = folderPerm
		out.WriteString(`<d:resourcetype><d:collection/></d:resourcetype>`)
	} else {
		out.WriteString(`<d:resourcetype/><d:getcontentlength>` + strconv.FormatInt(n.size, 10) + `</d:getcontentlength>`)
	}
	out.WriteString(`<d:getlastmodified>` + n.modTime.UTC().Format(http.TimeFormat) + `</d:getlastmodified>`)
	out.WriteString(`<d:getetag>"` + n.etag + `"</d:getetag><oc:id>` + n.id + `</oc:id><oc:fileid>` + n.id + `</oc:fileid>`)
	out.WriteString(`<oc:permissions>` + perm + `</oc:permissions><oc:size>` + strconv.FormatInt(n.size, 10) + `</oc:size>`)
	if !n.isDir() && !n.sums.IsZero() {
		out.WriteString(`<oc:checksums><oc:checksum>` + n.sums.String() + `</oc:checksum></oc:checksums>`)
	}
	out.WriteString(`</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`)
}

// href is the escaped URL path of n under prefix; folders end in a slash.
func href(prefix string, n *node) string {
	p := pathOf(n)
	var b strings.Builder
	b.WriteString(prefix)
	for i, name := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(url.PathEscape(name))
	}
	if n.isDir() && p != "" {
		b.WriteByte('/')
	}
	return b.String()
}
