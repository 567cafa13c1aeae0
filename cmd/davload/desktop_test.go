package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDesktopAgainstStub runs both real desktop clients through davload
// desktop against the stub: three passes each, every file verified on the
// server, and a local file changed behind the client's back is reported.
func TestDesktopAgainstStub(t *testing.T) {
	server := startStub(t)
	for _, client := range []string{"owncloudcmd", "nextcloudcmd"} {
		t.Run(client, func(t *testing.T) {
			if _, err := exec.LookPath(client); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is needed: %v", client, err)
				}
				t.Skipf("%s is not installed", client)
			}
			cfg := &desktopConfig{client: client, server: server, user: "u-" + client, pass: "x", work: t.TempDir(),
				folder: "sync", label: "stub", files: 40, folders: 4, changed: 5, size: 4 << 10, timeout: 2 * time.Minute}
			results, err := cfg.run(context.Background(), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			var scenarios []string
			for _, res := range results {
				scenarios = append(scenarios, res.Scenario)
				if res.Errors > 0 {
					t.Errorf("%s: %d errors", res.Scenario, res.Errors)
				}
			}
			if got := strings.Join(scenarios, ","); got != "desktop-first,desktop-resync,desktop-noop,desktop-changed" {
				t.Errorf("passes %s", got)
			}
			local := filepath.Join(cfg.work, "local")
			if err := os.WriteFile(filepath.Join(local, "d01", "f0002.bin"), []byte("not synced"), 0o644); err != nil {
				t.Fatal(err)
			}
			err = cfg.verify(context.Background(), local, cfg.tree())
			if err == nil || !strings.Contains(err.Error(), "1 of 40 files differ") {
				t.Errorf("verify after a change behind the client's back: %v", err)
			}
		})
	}
}

// startStub serves the stub on a free loopback port for the test.
func startStub(t *testing.T) string {
	t.Helper()
	l, err := listenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveStub(ctx, l, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + l.Addr().String() + "/"
}
