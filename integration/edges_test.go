package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// accessLogged is a Caddy serving Caddyfile.example over TLS (so that Go's
// client speaks HTTP/2 or HTTP/1.1, as asked) with its access log written
// as JSON to a file the test reads.
type accessLogged struct {
	*server
	accessLog string
}

// startAccessLogged starts Caddy like startServer with tls, plus an access
// log; with postgres, on the distributed store (a database and a bucket of
// testpeer's) rather than the embedded one.
func startAccessLogged(t *testing.T, postgres bool) accessLogged {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	accessLog := filepath.Join(dir, "access.log")
	// The root line that exampleCaddyfile writes becomes the store block.
	const rootMarker = "<store>"
	root := filepath.Join(dir, "data")
	if postgres {
		root = rootMarker
	}
	cfg := exampleCaddyfile(t, port, root, serverOptions{tls: true})
	site := fmt.Sprintf("https://localhost:%d {\n", port)
	logBlock := fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n", quoteCaddyfile(accessLog))
	replacements := map[string]string{site: site + logBlock}
	if postgres {
		replacements["\t\t\troot "+rootMarker+"\n"] = indent(postgresStore(t), "\t\t\t")
	}
	for old, repl := range replacements {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the test's Caddyfile has no %q", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	run := caddyRun{dir: dir, config: cfg, url: fmt.Sprintf("https://localhost:%d", port)}
	return accessLogged{server: run.start(t), accessLog: accessLog}
}

// postgresStore is the store block of a node on a fresh database and
// bucket, as the cluster's nodes have it.
func postgresStore(t *testing.T) []string {
	t.Helper()
	return postgresStoreBlock(clusterStorage(t, clusterOptions{}))
}

// accessEntry is what the test reads of a line of Caddy's access log.
type accessEntry struct {
	Msg     string `json:"msg"`
	Status  int    `json:"status"`
	Request struct {
		Method string `json:"method"`
		URI    string `json:"uri"`
		Proto  string `json:"proto"`
	} `json:"request"`
}

// waitAccessEntry waits (at most a minute: the machine may be loaded) for
// the access log's line about method uri and returns it.
func (s accessLogged) waitAccessEntry(t *testing.T, method, uri string) accessEntry {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if e, ok := s.findAccessEntry(t, method, uri); ok {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("no access log line for %s %s", method, uri)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s accessLogged) findAccessEntry(t *testing.T, method, uri string) (accessEntry, bool) {
	t.Helper()
	f, err := os.Open(s.accessLog)
	if errors.Is(err, os.ErrNotExist) {
		return accessEntry{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var e accessEntry
		if json.Unmarshal(lines.Bytes(), &e) != nil {
			continue
		}
		if e.Msg == "handled request" && e.Request.Method == method && e.Request.URI == uri {
			return e, true
		}
	}
	return accessEntry{}, false
}

// protocolClient is a client of s that speaks only HTTP/2 or only
// HTTP/1.1.
func protocolClient(t *testing.T, s *server, user string, http2 bool) *client {
	t.Helper()
	transport := caddyCAClient(t, s).Transport.(*http.Transport).Clone()
	transport.Protocols = new(http.Protocols)
	if http2 {
		transport.Protocols.SetHTTP2(true)
	} else {
		transport.Protocols.SetHTTP1(true)
	}
	return &client{t: t, base: s.URL, user: user, http: &http.Client{Timeout: time.Minute, Transport: transport}}
}

// abandonBody sends a request announcing size bytes of body, sends the
// first sent bytes of it, and then cancels the request as a client that
// gives up does: over HTTP/1.1 the connection closes, over HTTP/2 the
// stream is reset.
func (c *client) abandonBody(method, path string, header map[string]string, size, sent int64) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body, feed := io.Pipe()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.ContentLength = size
	req.SetBasicAuth(c.user, users[c.user])
	for k, v := range header {
		req.Header.Set(k, v)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := c.http.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %d before the body was complete", resp.StatusCode)
		}
		done <- err
	}()
	// The pipe hands the bytes over only as the transport sends them, so
	// the server has been given them when the write returns.
	if _, err := feed.Write(make([]byte, sent)); err != nil {
		c.t.Fatalf("%s %s: sending the start of the body: %v", method, path, err)
	}
	cancel()
	feed.CloseWithError(context.Canceled)
	if err := <-done; !errors.Is(err, context.Canceled) {
		c.t.Fatalf("%s %s: %v, want the client's own cancellation", method, path, err)
	}
}

// abandonedUpload is one way of uploading whose body a client abandons.
type abandonedUpload struct {
	name string
	// abandon starts an upload of file (a name in einstein's personal
	// space), abandons its body and returns the request's method and URI.
	abandon func(c *client, file string) (method, uri string)
	// check asserts that nothing of the abandoned body was stored.
	check func(t *testing.T, c *client, file string)
}

const (
	abandonedSize = 4 << 20  // announced
	abandonedSent = 32 << 10 // sent before giving up
)

var abandonedUploads = []abandonedUpload{
	{
		name: "PUT",
		abandon: func(c *client, file string) (string, string) {
			uri := "/remote.php/webdav/" + file
			c.abandonBody(http.MethodPut, uri, nil, abandonedSize, abandonedSent)
			return http.MethodPut, uri
		},
		check: wantNoFile,
	},
	{
		name: "TUS PATCH",
		abandon: func(c *client, file string) (string, string) {
			resp, body, err := c.tusCreate("/remote.php/webdav/", file, abandonedSize, nil)
			if err != nil || resp.StatusCode != http.StatusCreated {
				c.t.Fatalf("creating a TUS upload: %v %v\n%s", err, resp, body)
			}
			uri := uploadPath(c.t, c.base, resp.Header.Get("Location"))
			c.abandonBody(http.MethodPatch, uri, map[string]string{
				"Tus-Resumable": tusResumable,
				"Upload-Offset": "0",
				"Content-Type":  "application/offset+octet-stream",
			}, abandonedSize, abandonedSent)
			return http.MethodPatch, uri
		},
		check: wantNoFile,
	},
	{
		name: "chunking NG part",
		abandon: func(c *client, file string) (string, string) {
			upload := ngUpload(c.user, "abandoned-"+file)
			c.expect(http.StatusCreated, "MKCOL", upload, "", "Destination", c.base+"/remote.php/dav/files/"+c.user+"/"+file)
			uri := upload + "/00001"
			c.abandonBody(http.MethodPut, uri, nil, abandonedSize, abandonedSent)
			return http.MethodPut, uri
		},
		check: func(t *testing.T, c *client, file string) {
			upload := ngUpload(c.user, "abandoned-"+file)
			for _, r := range c.propfind(upload+"/", "1", "") {
				if strings.HasSuffix(r.href, "/00001") {
					t.Errorf("the abandoned part is stored: %s", r.href)
				}
			}
			wantNoFile(t, c, file)
		},
	},
	{
		name: "chunking v1 chunk",
		abandon: func(c *client, file string) (string, string) {
			uri := "/remote.php/webdav/" + file + "-chunking-4711-2-0"
			c.abandonBody(http.MethodPut, uri, map[string]string{"OC-Chunked": "1"}, abandonedSize, abandonedSent)
			return http.MethodPut, uri
		},
		check: func(t *testing.T, c *client, file string) {
			// Had the abandoned chunk been kept, the second one would
			// complete the file.
			second := "/remote.php/webdav/" + file + "-chunking-4711-2-1"
			if err := c.tryV1Chunk(second, []byte("second"), map[string]string{"OC-Chunked": "1"}, false); err != nil {
				t.Error(err)
			}
			wantNoFile(t, c, file)
		},
	},
}

// wantNoFile checks that file is not in the user's personal space.
func wantNoFile(t *testing.T, c *client, file string) {
	t.Helper()
	if resp, body := c.do(http.MethodGet, "/remote.php/webdav/"+file, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET %s after the abandoned upload: %d, want 404\n%s", file, resp.StatusCode, tail(body, 500))
	}
}

// TestAbandonedBodiesAreClientErrors: a client that gives up in the middle
// of an upload's body, over HTTP/1.1 (the connection closes) or HTTP/2 (the
// stream is reset), is answered and logged with a 4xx, never a 5xx that
// would page an operator, and nothing of the body is stored. Over HTTP/2
// the reset reaches the handler at any moment, also before it reads the
// body (its store calls then fail), so each upload is abandoned a few
// times.
func TestAbandonedBodiesAreClientErrors(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		name     string
		postgres bool
	}{{"embedded", false}, {"postgres", true}} {
		t.Run(store.name, func(t *testing.T) {
			abandonUploads(t, startAccessLogged(t, store.postgres))
		})
	}
}

// abandonUploads abandons every kind of upload a few times over each
// protocol, and checks what s logged and kept.
func abandonUploads(t *testing.T, s accessLogged) {
	const rounds = 3
	for _, proto := range []struct {
		name, tag string
		http2     bool
	}{{"HTTP/1.1", "h1", false}, {"HTTP/2.0", "h2", true}} {
		c := protocolClient(t, s.server, "einstein", proto.http2)
		for round := range rounds {
			for i, u := range abandonedUploads {
				t.Run(fmt.Sprintf("%s %s %d", proto.name, u.name, round), func(t *testing.T) {
					c := c.in(t)
					file := fmt.Sprintf("abandoned-%s-%d-%d.bin", proto.tag, round, i)
					method, uri := u.abandon(c, file)
					e := s.waitAccessEntry(t, method, uri)
					if e.Request.Proto != proto.name {
						t.Errorf("%s %s went over %s, want %s", method, uri, e.Request.Proto, proto.name)
					}
					if e.Status < 400 || e.Status >= 500 {
						t.Errorf("%s %s abandoned over %s: logged with status %d, want a 4xx", method, uri, proto.name, e.Status)
					}
					u.check(t, c, file)
				})
			}
		}
	}
}

// TestRefusedEdgesThroughCaddy: through the real Caddy, over HTTP/1.1 and
// HTTP/2, Range: bytes=-0 is a 416 (RFC 9110 §14.1.2), a PROPFIND or
// PROPPATCH body with a second root element is a 400, and so is a dead
// property nested 65 elements deep, while one 64 deep is stored; each
// refusal carries the WebDAV error body and changes nothing.
func TestRefusedEdgesThroughCaddy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{tls: true})
	nested := func(depth int) string {
		return strings.Repeat("<a>", depth) + "v" + strings.Repeat("</a>", depth)
	}
	patch := func(value string) string {
		return `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:p>` + value + `</x:p></d:prop></d:set></d:propertyupdate>`
	}
	const propfind = `<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>`
	for _, proto := range []struct {
		name  string
		http2 bool
	}{{"HTTP/1.1", false}, {"HTTP/2.0", true}} {
		t.Run(proto.name, func(t *testing.T) {
			c := protocolClient(t, s, "einstein", proto.http2)
			file := "/remote.php/webdav/edges-" + strconv.FormatBool(proto.http2) + ".txt"
			c.expect(http.StatusCreated, http.MethodPut, file, "0123456789")

			resp, body := c.expect(http.StatusRequestedRangeNotSatisfiable, http.MethodGet, file, "", "Range", "bytes=-0")
			if resp.Proto != proto.name {
				t.Fatalf("answered over %s, want %s", resp.Proto, proto.name)
			}
			if got := resp.Header.Get("Content-Range"); got != "bytes */10" {
				t.Errorf("Content-Range %q, want bytes */10", got)
			}
			wantErrorBody(t, body, "RequestedRangeNotSatisfiable")
			resp, body = c.expect(http.StatusPartialContent, http.MethodGet, file, "", "Range", "bytes=-0,0-1")
			if body != "01" || resp.Header.Get("Content-Range") != "bytes 0-1/10" {
				t.Errorf("bytes=-0,0-1: %q, Content-Range %q; want 01, bytes 0-1/10", body, resp.Header.Get("Content-Range"))
			}

			_, body = c.expect(http.StatusBadRequest, "PROPFIND", file, propfind+propfind, "Depth", "0")
			wantErrorBody(t, body, "BadRequest")
			_, body = c.expect(http.StatusBadRequest, "PROPPATCH", file, patch("two roots")+"<x/>")
			wantErrorBody(t, body, "BadRequest")
			_, body = c.expect(http.StatusBadRequest, "PROPPATCH", file, patch(nested(65)))
			wantErrorBody(t, body, "BadRequest")
			asked := `<d:propfind xmlns:d="DAV:"><d:prop><x:p xmlns:x="urn:x"/></d:prop></d:propfind>`
			if v, ok := c.propfind(file, "0", asked)[0].props["urn:x p"]; ok {
				t.Fatalf("a refused PROPPATCH stored %q", v)
			}
			c.expect(http.StatusMultiStatus, "PROPPATCH", file, patch(nested(64)))
			if v := c.prop(file, "urn:x", "p"); strings.Count(v, "<a") != 64 {
				t.Fatalf("the value 64 deep reads back as %q", v)
			}
		})
	}
}

// wantErrorBody checks that body is the WebDAV error body of exception.
func wantErrorBody(t *testing.T, body, exception string) {
	t.Helper()
	var e struct {
		XMLName   xml.Name `xml:"DAV: error"`
		Exception string   `xml:"http://sabredav.org/ns exception"`
	}
	if err := xml.Unmarshal([]byte(body), &e); err != nil || e.Exception != `Sabre\DAV\Exception\`+exception {
		t.Fatalf("not the error body of %s (%v):\n%s", exception, err, body)
	}
}
