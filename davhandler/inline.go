package davhandler

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// contentSandbox is the Content-Security-Policy of every file's content: a
// file opened in the browser is a document of a unique, opaque origin
// (sandbox) that runs no script and loads nothing but its own images,
// media and inline styles, so that a user's upload can never act as the
// page, which shares the file's origin and the user's credentials.
const contentSandbox = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

// setContentHeaders sets the type of a file's content, the headers that
// keep it from running as the server's origin, and its disposition: shown
// in the browser when its type is one the browser displays harmlessly,
// offered as a download otherwise. WebDAV clients ignore all but the type.
func setContentHeaders(hdr http.Header, name, contentType string) {
	hdr.Set("Content-Type", contentType)
	hdr.Set("Content-Security-Policy", contentSandbox)
	hdr.Set("X-Content-Type-Options", "nosniff")
	disposition := contentDisposition(name)
	if viewableInline(contentType) {
		disposition = "inline" + strings.TrimPrefix(disposition, "attachment")
	}
	hdr.Set("Content-Disposition", disposition)
}

// viewableInline reports whether a browser shows content of contentType
// without running anything in it: images but SVG, plain text, PDF, audio
// and video. HTML, SVG, XML, scripts and unknown types are downloaded.
func viewableInline(contentType string) bool {
	typ, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	major, minor, _ := strings.Cut(typ, "/")
	switch major {
	case "image":
		return !strings.HasSuffix(minor, "+xml")
	case "audio", "video":
		return true
	}
	return typ == "text/plain" || typ == "application/pdf"
}

// contentDisposition offers a file for download under its own name (RFC 6266).
func contentDisposition(name string) string {
	return `attachment; filename*=UTF-8''` + url.PathEscape(name) + `; filename="` + quoteFilename(name) + `"`
}
