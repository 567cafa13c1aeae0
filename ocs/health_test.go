package ocs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// newHealthHandler is a handler whose store's health is *health.
func newHealthHandler(t *testing.T, health *error) *Handler {
	t.Helper()
	h, err := New(Config{
		User:   func(*http.Request) (storage.User, bool) { return storage.User{}, false },
		Status: DefaultStatus("1.2.3"),
		Health: func(context.Context) error { return *health },
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHealthAnswers: /healthz is 200 ok while the store is healthy and 503
// with Retry-After while it is not; /status.php stays 200 with the same
// fields and reports maintenance then.
func TestHealthAnswers(t *testing.T) {
	var health error
	h := newHealthHandler(t, &health)
	maintenance := func() any {
		t.Helper()
		w := serve(h, http.MethodGet, "/status.php")
		var got map[string]any
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &got) != nil || len(got) != 9 {
			t.Fatalf("status.php: %d %s", w.Code, w.Body)
		}
		return got["maintenance"]
	}

	if w := serve(h, http.MethodGet, HealthPath); w.Code != http.StatusOK || w.Body.String() != "ok\n" || w.Header().Get("Retry-After") != "" {
		t.Fatalf("healthy %s: %d %q", HealthPath, w.Code, w.Body)
	}
	if got := maintenance(); got != false {
		t.Fatalf("healthy maintenance = %v", got)
	}

	health = errors.New("database: dial tcp 10.0.0.7:5432: connection refused")
	w := serve(h, http.MethodGet, HealthPath)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("unhealthy %s: %d, Retry-After %q", HealthPath, w.Code, w.Header().Get("Retry-After"))
	}
	if strings.Contains(w.Body.String(), "10.0.0.7") {
		t.Fatalf("the health answer tells the cause: %q", w.Body)
	}
	if got := maintenance(); got != true {
		t.Fatalf("unhealthy maintenance = %v", got)
	}
	if w := serve(h, http.MethodPost, HealthPath); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST %s: %d, want 405", HealthPath, w.Code)
	}
}
