package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// propfindBody asks for the properties ownCloud's desktop client lists.
const propfindBody = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop>
    <d:resourcetype/>
    <d:getlastmodified/>
    <d:getcontentlength/>
    <d:getetag/>
    <oc:id/>
    <oc:fileid/>
    <oc:permissions/>
    <oc:size/>
    <oc:checksums/>
    <oc:favorite/>
    <oc:share-types/>
  </d:prop>
</d:propfind>
`

// call describes one request.
type call struct {
	method string
	url    string
	header map[string]string
	body   io.Reader
	size   int64 // Content-Length when body is set
	want   []int // accepted statuses
	// read, when set, consumes a successful response body as it streams
	// in (what it leaves is discarded).
	read  func(io.Reader) error
	large bool // allow the large-transfer timeout
}

// do sends c, reads the whole response and checks its status. It returns
// the number of body bytes received.
func (r *runner) do(ctx context.Context, c call) (int64, error) {
	timeout := r.cfg.timeout
	if c.large {
		timeout += time.Duration(r.cfg.large/1e6) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, nil)
	if err != nil {
		return 0, err
	}
	if c.body != nil {
		req.Body = io.NopCloser(c.body)
		req.ContentLength = c.size
		if c.size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if r.cfg.user != "" {
		req.SetBasicAuth(r.cfg.user, r.cfg.pass)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if !slices.Contains(c.want, resp.StatusCode) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return int64(len(body)), fmt.Errorf("%s %s: status %s, want %v%s", c.method, c.url, resp.Status, c.want, excerpt(body))
	}
	body := &countingReader{r: resp.Body}
	if c.read != nil {
		if err := c.read(body); err != nil {
			return body.n, fmt.Errorf("%s %s: %w", c.method, c.url, err)
		}
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return body.n, fmt.Errorf("%s %s: reading response: %w", c.method, c.url, err)
	}
	return body.n, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// excerpt shows the start of an error body.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return ": " + s
}

// child returns the URL of name inside the collection at base (a URL ending
// in a slash); dir adds the trailing slash of a collection.
func child(base, name string, dir bool) string {
	u := base + url.PathEscape(name)
	if dir {
		u += "/"
	}
	return u
}

// preflight checks that the URL is a collection the credentials can read.
func (r *runner) preflight(ctx context.Context) error {
	_, err := r.do(ctx, call{
		method: "PROPFIND", url: r.cfg.base.String(),
		header: map[string]string{"Depth": "0", "Content-Type": "application/xml; charset=utf-8"},
		body:   strings.NewReader(propfindBody), size: int64(len(propfindBody)),
		want: []int{http.StatusMultiStatus},
	})
	if err != nil {
		return fmt.Errorf("server check failed: %v", err)
	}
	return nil
}

// mkcol creates a folder at URL u (ending in a slash).
func (r *runner) mkcol(s *scenario, u string) bool {
	if _, err := r.do(s.ctx, call{method: "MKCOL", url: u, want: []int{http.StatusCreated}}); err != nil {
		s.fail(err)
		return false
	}
	return true
}

// remove deletes a folder at the end of a scenario, even after an
// interrupt.
func (r *runner) remove(s *scenario, u string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*r.cfg.timeout)
	defer cancel()
	_, err := r.do(ctx, call{method: "DELETE", url: u, want: []int{http.StatusNoContent, http.StatusOK}})
	if err != nil {
		s.errors.Add(1)
		r.logf("%s: cleanup: %v", s.name, err)
	}
}

// putStatuses are the answers to a successful PUT.
var putStatuses = []int{http.StatusCreated, http.StatusNoContent, http.StatusOK}

// put uploads content to u.
func (r *runner) put(ctx context.Context, u string, content []byte) error {
	_, err := r.do(ctx, call{method: "PUT", url: u,
		header: map[string]string{"Content-Type": "application/octet-stream"},
		body:   bytes.NewReader(content), size: int64(len(content)), want: putStatuses})
	return err
}

// propfindCall lists dir with the ownCloud client's properties; read, when
// set, gets the multistatus as it streams in.
func propfindCall(dir string, read func(io.Reader) error) call {
	return call{method: "PROPFIND", url: dir,
		header: map[string]string{"Depth": "1", "Content-Type": "application/xml; charset=utf-8"},
		body:   strings.NewReader(propfindBody), size: int64(len(propfindBody)),
		want: []int{http.StatusMultiStatus}, read: read}
}
