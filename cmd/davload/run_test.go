package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/webdav"
)

// TestRunAgainstWebDAVServer drives every scenario against
// golang.org/x/net/webdav on loopback and checks the JSON lines: the counts
// bound the loops, the listing is complete and nothing failed.
func TestRunAgainstWebDAVServer(t *testing.T) {
	srv := webdavServer(t)
	var out, errs bytes.Buffer
	code := run([]string{"-url", srv.URL + "/", "-label", "xnet", "-round", "2",
		"-scenario", "all", "-files", "30", "-concurrency", "3", "-count", "20", "-duration", "10s",
		"-size", "64", "-large", "1MiB"}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs.String())
	}
	results := resultLines(t, &out)
	for _, name := range scenarioNames {
		res, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no JSON line", name)
		case res.Label != "xnet" || res.Round != 2 || res.Errors != 0:
			t.Errorf("%s: %+v", name, res)
		}
	}
	for _, name := range []string{"put-small", "propfind", "sync"} {
		if n := results[name].N; n != 20 {
			t.Errorf("%s: %d requests, want -count 20", name, n)
		}
	}
	if res := results["propfind"]; res.Entries != 31 || res.SetupOpsPerSec <= 0 || res.P90Ms <= 0 {
		t.Errorf("propfind: %d entries (want 31), seeding %.0f/s, p90 %.2f ms", res.Entries, res.SetupOpsPerSec, res.P90Ms)
	}
	if res := results["put-small"]; res.Size != 64 || res.Bytes != 20*64 {
		t.Errorf("put-small: size %d, %d bytes", res.Size, res.Bytes)
	}
	if res := results["mkcol-delete"]; res.N != 40 {
		t.Errorf("mkcol-delete: %d requests, want 20 MKCOLs and their DELETEs", res.N)
	}
	if res := results["delete"]; res.N != 20 || res.Files != 30 || res.P50Ms <= 0 || res.OpsPerSec != 0 {
		t.Errorf("delete: %+v, want 20 timed DELETEs of folders of 30 files", res)
	}
	if res := results["get-large"]; res.Bytes != 1<<20 {
		t.Errorf("get-large: %d bytes", res.Bytes)
	}
}

// TestGetLargeAlone: without put-large before it, get-large uploads its
// file untimed (the setup) and then times the download; the GET would fail
// without that upload.
func TestGetLargeAlone(t *testing.T) {
	srv := webdavServer(t)
	var out, errs bytes.Buffer
	if code := run([]string{"-url", srv.URL + "/", "-scenario", "get-large", "-large", "1MiB"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d\n%s", code, errs.String())
	}
	if res := resultLines(t, &out)["get-large"]; res.N != 1 || res.Bytes != 1<<20 || res.Errors != 0 {
		t.Errorf("get-large alone: %+v", res)
	}
}

// webdavServer serves golang.org/x/net/webdav from memory on loopback.
func webdavServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(&webdav.Handler{FileSystem: webdav.NewMemFS(), LockSystem: webdav.NewMemLS()})
	t.Cleanup(srv.Close)
	return srv
}

// resultLines reads the JSON lines of davload's output, by scenario.
func resultLines(t *testing.T, out io.Reader) map[string]result {
	t.Helper()
	results := map[string]result{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var res result
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		results[res.Scenario] = res
	}
	return results
}
