package main

import (
	"io"
	"slices"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost":        true,
		"LOCALHOST":        true,
		"localhost.":       true,
		"127.0.0.1":        true,
		"127.1.2.3":        true,
		"::1":              true,
		"::ffff:127.0.0.1": true,
		"":                 false,
		"0.0.0.0":          false,
		"10.0.0.1":         false,
		"::":               false,
		"example.com":      false,
		"localhost.evil":   false,
		"128.0.0.1":        false,
	} {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestParseBaseURL(t *testing.T) {
	u, err := parseBaseURL("http://127.0.0.1:9280/remote.php/webdav")
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "http://127.0.0.1:9280/remote.php/webdav/" {
		t.Errorf("got %s", got)
	}
	if u, err := parseBaseURL("https://[::1]:8443/dav/"); err != nil || u.Hostname() != "::1" {
		t.Errorf("::1: %v %v", u, err)
	}
	for _, bad := range []string{
		"http://192.168.1.10/webdav/",
		"http://example.com/webdav/",
		"http://[::]:80/",
		"ftp://127.0.0.1/",
		"127.0.0.1:9280/webdav/",
		"http://u:p@127.0.0.1/webdav/",
	} {
		if _, err := parseBaseURL(bad); err == nil {
			t.Errorf("parseBaseURL(%q) accepted", bad)
		}
	}
}

// TestParseSize: sizes mean what they mean in the Caddyfile (go-humanize),
// so k, M and G are powers of 1000 and KiB, MiB, GiB powers of 1024.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4096":    4096,
		"0":       0,
		"64KiB":   64 << 10,
		"64kib":   64 << 10,
		"64Ki":    64 << 10,
		"64k":     64e3,
		"64KB":    64e3,
		"256MiB":  256 << 20,
		"256 MiB": 256 << 20,
		"256M":    256e6,
		"1.5GiB":  3 << 29,
		"100MB":   100e6,
		"1TiB":    1 << 40,
		"1,024":   1024,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "12XB", "-1", "1e3", "99999999999999999999", "9000000TiB", "16EiB"} {
		if n, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, n)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		256 << 20: "256 MiB",
		1 << 30:   "1.0 GiB",
		3 << 29:   "1.5 GiB",
		4096:      "4.0 KiB",
		1000:      "1000 B",
		0:         "0 B",
		-1:        "0 B",
	} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestLargeFlagDefault: the default shown by -help reads back as itself.
func TestLargeFlagDefault(t *testing.T) {
	cfg, err := parseFlags([]string{"-url", "http://127.0.0.1:9280/webdav/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	shown := (*sizeFlag)(&cfg.large).String()
	var back sizeFlag
	if err := back.Set(shown); err != nil || int64(back) != cfg.large {
		t.Errorf("-large default %d shown as %q reads back as %d, %v", cfg.large, shown, back, err)
	}
	if err := back.Set("2k"); err != nil || back != 2000 {
		t.Errorf("-large 2k = %d, %v; want 2000", back, err)
	}
}

func TestParseScenarios(t *testing.T) {
	got, err := parseScenarios("mkcol-delete, propfind,propfind")
	if err != nil || !slices.Equal(got, []string{"propfind", "mkcol-delete"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := parseScenarios("all"); err != nil || !slices.Equal(got, scenarioNames) {
		t.Errorf("all: got %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "propfind,nope"} {
		if _, err := parseScenarios(bad); err == nil {
			t.Errorf("parseScenarios(%q) accepted", bad)
		}
	}
}
