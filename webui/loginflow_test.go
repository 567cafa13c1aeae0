package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServeLoginFlow: a login URL's page names the client that asks,
// escaped, under the page's headers; a link of no open flow is 404 and
// names none.
func TestServeLoginFlow(t *testing.T) {
	h := newHandler(t)
	serve := func(client string, found bool) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeLoginFlow(w, httptest.NewRequest(http.MethodGet, "/index.php/login/v2/flow/x", nil), client, found)
		return w
	}
	w := serve(`laptop "<script>" (Desktop Client - Linux)`, true)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `<meta name="davspaces-loginflow-client" content="laptop &#34;&lt;script&gt;&#34; (Desktop Client - Linux)">`) ||
		!strings.Contains(body, `data-view="loginflow"`) || w.Header().Get("Content-Security-Policy") == "" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("the page of an open flow: %d %v\n%s", w.Code, w.Header(), body)
	}
	w = serve("", false)
	if w.Code != http.StatusNotFound || strings.Contains(w.Body.String(), "davspaces-loginflow-client") || !strings.Contains(w.Body.String(), `data-view="loginflow"`) {
		t.Fatalf("the page of no flow: %d\n%s", w.Code, w.Body)
	}
}
