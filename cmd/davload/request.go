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
	ctx, cancel := context.WithTimeout(ctx, r.timeoutFor(c))
	defer cancel()
	req, err := r.newRequest(ctx, c)
	if err != nil {
		return 0, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return c.readResponse(resp)
}

// send is do for requests whose body size does not matter.
func (r *runner) send(ctx context.Context, c call) error {
	_, err := r.do(ctx, c)
	return err
}

// fetch is do for a download that must have size bytes.
func (r *runner) fetch(ctx context.Context, c call, size int64) error {
	n, err := r.do(ctx, c)
	if err == nil && n != size {
		err = fmt.Errorf("%s %s: %d bytes, want %d", c.method, c.url, n, size)
	}
	return err
}

// timeoutFor is -timeout, and another second per MB of -large for the
// large transfers.
func (r *runner) timeoutFor(c call) time.Duration {
	timeout := r.cfg.timeout
	if c.large {
		timeout += time.Duration(r.cfg.large/1e6) * time.Second
	}
	return timeout
}

// newRequest builds c's request with the run's credentials.
func (r *runner) newRequest(ctx context.Context, c call) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, nil)
	if err != nil {
		return nil, err
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
	return req, nil
}

// readResponse checks the status of c's response and reads its whole
// body, through c.read when set. It returns the number of body bytes.
func (c call) readResponse(resp *http.Response) (int64, error) {
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

// propfindCall lists u to depth with the ownCloud client's properties;
// read, when set, gets the multistatus as it streams in.
func propfindCall(u, depth string, read func(io.Reader) error) call {
	return call{method: "PROPFIND", url: u,
		header: map[string]string{"Depth": depth, "Content-Type": "application/xml; charset=utf-8"},
		body:   strings.NewReader(propfindBody), size: int64(len(propfindBody)),
		want: []int{http.StatusMultiStatus}, read: read}
}

// putCall uploads size bytes of body to u.
func putCall(u string, body io.Reader, size int64) call {
	return call{method: "PUT", url: u,
		header: map[string]string{"Content-Type": "application/octet-stream"},
		body:   body, size: size, want: []int{http.StatusCreated, http.StatusNoContent, http.StatusOK}}
}

func getCall(u string) call { return call{method: "GET", url: u, want: []int{http.StatusOK}} }

// mkcolCall creates a folder at u (ending in a slash).
func mkcolCall(u string) call { return call{method: "MKCOL", url: u, want: []int{http.StatusCreated}} }

func deleteCall(u string) call {
	return call{method: "DELETE", url: u, want: []int{http.StatusNoContent, http.StatusOK}}
}

// largeTransfer gives c the longer timeout of -large bodies.
func largeTransfer(c call) call {
	c.large = true
	return c
}

// preflight checks that the URL is a collection the credentials can read.
func (r *runner) preflight(ctx context.Context) error {
	if err := r.send(ctx, propfindCall(r.cfg.base.String(), "0", nil)); err != nil {
		return fmt.Errorf("server check failed: %v", err)
	}
	return nil
}

// put uploads content to u.
func (r *runner) put(ctx context.Context, u string, content []byte) error {
	return r.send(ctx, putCall(u, bytes.NewReader(content), int64(len(content))))
}
