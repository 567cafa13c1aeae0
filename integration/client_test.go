package integration

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// client sends WebDAV requests as one user: with Basic credentials of a
// demo user, or with a Bearer token.
type client struct {
	t     testing.TB
	base  string
	user  string
	token string
	http  *http.Client
}

func newClient(t testing.TB, base, user string) *client {
	return &client{t: t, base: base, user: user, http: &http.Client{Timeout: 30 * time.Second}}
}

// do sends a request; path is sent as written (already escaped); hdr holds
// header name/value pairs.
func (c *client) do(method, path, body string, hdr ...string) (*http.Response, string) {
	c.t.Helper()
	header := map[string]string{}
	for i := 0; i+1 < len(hdr); i += 2 {
		header[hdr[i]] = hdr[i+1]
	}
	resp, b := c.send(method, path, header, []byte(body))
	return resp, string(b)
}

// send sends a request with a deadline and reads the whole answer.
func (c *client) send(method, path string, header map[string]string, body []byte) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, users[c.user])
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, b
}

// response is a status and a body.
type response struct {
	code int
	body []byte
}

// sendAs sends one request as user to s; p is an unescaped path.
func sendAs(t testing.TB, s *server, user, method, p string, header map[string]string, body []byte) response {
	t.Helper()
	resp, b := newClient(t, s.URL, user).send(method, (&url.URL{Path: p}).EscapedPath(), header, body)
	return response{resp.StatusCode, b}
}

// mustGet downloads p (unescaped) as einstein.
func mustGet(t testing.TB, s *server, p string) []byte {
	t.Helper()
	resp := sendAs(t, s, "einstein", http.MethodGet, p, nil, nil)
	if resp.code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", p, resp.code, resp.body)
	}
	return resp.body
}

// expect sends a request and checks its status.
func (c *client) expect(status int, method, path, body string, hdr ...string) (*http.Response, string) {
	c.t.Helper()
	resp, b := c.do(method, path, body, hdr...)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, resp.StatusCode, status, b)
	}
	return resp, b
}

// prop reads one property of a resource with PROPFIND Depth 0.
func (c *client) prop(path, ns, local string) string {
	c.t.Helper()
	body := fmt.Sprintf(`<d:propfind xmlns:d="DAV:"><d:prop><x:%s xmlns:x="%s"/></d:prop></d:propfind>`, local, ns)
	_, b := c.expect(http.StatusMultiStatus, "PROPFIND", path, body, "Depth", "0")
	var ms struct {
		Propstats []struct {
			Props []struct {
				XMLName xml.Name
				Value   string `xml:",innerxml"`
			} `xml:",any"`
		} `xml:"response>propstat>prop"`
	}
	if err := xml.Unmarshal([]byte(b), &ms); err != nil {
		c.t.Fatalf("PROPFIND %s: %v\n%s", path, err, b)
	}
	for _, ps := range ms.Propstats {
		for _, p := range ps.Props {
			if p.XMLName.Local == local && strings.Contains(b, "200 OK") {
				return p.Value
			}
		}
	}
	c.t.Fatalf("PROPFIND %s: no %s in\n%s", path, local, b)
	return ""
}
