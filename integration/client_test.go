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

	"github.com/google/uuid"
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

// in is the same client reporting to t (a subtest).
func (c *client) in(t testing.TB) *client {
	in := *c
	in.t = t
	return &in
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
	resp, b, err := c.try(method, path, header, body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, b
}

// try is send for goroutines other than the test's own, which must not
// call t.Fatal: it returns the error instead.
func (c *client) try(method, path string, header map[string]string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
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
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	return resp, b, nil
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
	responses := c.propfind(path, "0", body)
	if len(responses) == 1 {
		if v, ok := responses[0].props[ns+" "+local]; ok {
			return v
		}
	}
	c.t.Fatalf("PROPFIND %s: no %s %s among %d responses", path, ns, local, len(responses))
	return ""
}

// davResponse is one response of a multistatus: its href as sent and the
// properties of its 200 propstats as "namespace local" to inner XML.
type davResponse struct {
	href  string
	props map[string]string
}

// parseMultistatus decodes a whole multistatus body. A body that is cut off,
// empty or holds a character XML cannot carry is an error, as it is for
// every client.
func parseMultistatus(body []byte) ([]davResponse, error) {
	var ms struct {
		XMLName   xml.Name `xml:"DAV: multistatus"`
		Responses []struct {
			Href      string `xml:"DAV: href"`
			Propstats []struct {
				Status string `xml:"DAV: status"`
				Prop   struct {
					Any []struct {
						XMLName xml.Name
						Value   string `xml:",innerxml"`
					} `xml:",any"`
				} `xml:"DAV: prop"`
			} `xml:"DAV: propstat"`
		} `xml:"DAV: response"`
	}
	if err := xml.Unmarshal(body, &ms); err != nil {
		return nil, fmt.Errorf("parsing multistatus: %w", err)
	}
	out := make([]davResponse, 0, len(ms.Responses))
	for _, r := range ms.Responses {
		resp := davResponse{href: r.Href, props: map[string]string{}}
		for _, ps := range r.Propstats {
			if !strings.Contains(ps.Status, " 200 ") {
				continue
			}
			for _, p := range ps.Prop.Any {
				resp.props[p.XMLName.Space+" "+p.XMLName.Local] = p.Value
			}
		}
		out = append(out, resp)
	}
	return out, nil
}

// propfind sends a PROPFIND and parses its multistatus.
func (c *client) propfind(path, depth, body string) []davResponse {
	c.t.Helper()
	_, b := c.expect(http.StatusMultiStatus, "PROPFIND", path, body, "Depth", depth, "Content-Type", "application/xml")
	responses, err := parseMultistatus([]byte(b))
	if err != nil {
		c.t.Fatalf("PROPFIND %s: %v\n%s", path, err, b)
	}
	return responses
}

// personalSpaceRef reads the resource id (<storage>$<space>) of user's
// personal space: the oc:spaceid of /webdav/.
func personalSpaceRef(t testing.TB, s *server, user string) string {
	t.Helper()
	ref := newClient(t, s.URL, user).prop("/webdav/", ocNS, "spaceid")
	if !strings.Contains(ref, "$") {
		t.Fatalf("oc:spaceid of %s's /webdav/ is %q, not <storage>$<space>", user, ref)
	}
	return ref
}

// projectSpaceRef is the resource id of the project space declared with
// name and no id, on the storage of spaceRef (any space's resource id).
// caddymodule derives such ids from the name (uuid.NewSHA1 in
// caddymodule.spaceNamespace).
func projectSpaceRef(spaceRef, name string) string {
	storageID, _, _ := strings.Cut(spaceRef, "$")
	return storageID + "$" + uuid.NewSHA1(uuid.MustParse("0b7b5cf4-6a2e-4c59-9a51-4f3b8c6d2e10"), []byte(name)).String()
}
