package webui

import (
	"strings"
	"testing"
)

// TestRequestsGoThroughDavSend keeps every request of the page to its
// server in dav.js's send, so that what each request needs (the token, the
// credentials) is added in one place: no other script calls fetch or
// XMLHttpRequest but auth.js, whose requests go to the identity provider.
func TestRequestsGoThroughDavSend(t *testing.T) {
	h := newHandler(t)
	for name, a := range h.assets {
		if !strings.HasSuffix(name, ".js") || name == "dav.js" || name == "auth.js" {
			continue
		}
		for _, banned := range []string{"fetch(", "XMLHttpRequest", "sendBeacon", "EventSource", "WebSocket"} {
			if strings.Contains(string(a.body), banned) {
				t.Errorf("%s uses %s: send requests with dav.js's send", name, banned)
			}
		}
	}
	if _, ok := h.assets["upload.js"]; !ok {
		t.Error("upload.js is not among the assets")
	}
}
