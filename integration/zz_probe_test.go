package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestZZProbe(t *testing.T) {
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/busy", "")
	for i := range 100 {
		c.expect(http.StatusCreated, "MKCOL", fmt.Sprintf("/webdav/busy/d-%03d", i), "")
	}
	var req, parse time.Duration
	n := 0
	for range 10 {
		start := time.Now()
		_, b := c.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/busy/", "", "Depth", "1")
		req += time.Since(start)
		start = time.Now()
		if _, err := parseMultistatus([]byte(b)); err != nil {
			t.Fatal(err)
		}
		parse += time.Since(start)
		n = len(b)
	}
	t.Logf("%d bytes: request %v parse %v per listing", n, req/10, parse/10)
	start := time.Now()
	for i := range 20 {
		c.expect(http.StatusNoContent, "DELETE", fmt.Sprintf("/webdav/busy/d-%03d", i), "")
		c.expect(http.StatusCreated, "MKCOL", fmt.Sprintf("/webdav/busy/d-%03d", i), "")
	}
	t.Logf("churn cycle %v", time.Since(start)/20)
}
