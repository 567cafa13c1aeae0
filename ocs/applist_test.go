package ocs

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestAppList: ownCloud Web's first call, made without a token, gets the
// empty list under the key it reads.
func TestAppList(t *testing.T) {
	h := newTestHandler(t, true)
	if _, ok := h.Route(mustRequest(t, AppListPath)); !ok {
		t.Fatalf("Route does not claim %s", AppListPath)
	}
	w := serve(h, http.MethodGet, AppListPath) // no user
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var body map[string][]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if list, ok := body["mime-types"]; !ok || list == nil || len(list) != 0 || len(body) != 1 {
		t.Errorf("app list %s, want {\"mime-types\":[]}", w.Body)
	}
	if w := serve(h, http.MethodHead, AppListPath); w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := serve(h, http.MethodPost, AppListPath); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

func mustRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
