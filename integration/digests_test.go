package integration

import (
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// TestPutDigestsMatchTools: whichever digest a PUT announces (none, MD5,
// ADLER32), oc:checksums gives all three right away (the PROPFIND waits
// for those the store computes after the commit), each the one sha1sum,
// md5sum and an Adler-32 of the test's own give; GET's OC-Checksum names
// a right one; and after a kill -9 right after the answers and a
// restart, every file still has every digest.
func TestPutDigestsMatchTools(t *testing.T) {
	t.Parallel()
	sha1sum, md5sum := requirePeer(t, "sha1sum"), requirePeer(t, "md5sum")
	s := startServer(t, serverOptions{})
	einstein := func(s *server) *client {
		c := newClient(t, s.URL, "einstein")
		c.http.Timeout = time.Minute
		return c
	}
	content := randomBytes(t, 8<<20+7)
	file := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	want := "<oc:checksum>SHA1:" + toolDigest(t, sha1sum, file) + " MD5:" + toolDigest(t, md5sum, file) + " ADLER32:" + ownAdler32(content) + "</oc:checksum>"
	announced := map[string]string{"none": "", "MD5": "MD5:" + toolDigest(t, md5sum, file), "ADLER32": "ADLER32:" + ownAdler32(content)}
	c := einstein(s)
	for name, sum := range announced {
		header := map[string]string{}
		if sum != "" {
			header["OC-Checksum"] = sum
		}
		if resp, body := c.send(http.MethodPut, "/webdav/"+name+".bin", header, content); resp.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d\n%s", name, resp.StatusCode, body)
		}
	}
	for name := range announced {
		if got := c.prop("/webdav/"+name+".bin", ocNS, "checksums"); got != want {
			t.Errorf("oc:checksums of %s.bin right after its PUT = %q, want %q", name, got, want)
		}
	}
	// A PUT announcing a wrong digest stores nothing, as before.
	c.expect(http.StatusBadRequest, http.MethodPut, "/webdav/wrong.bin", "x", "OC-Checksum", "ADLER32:"+ownAdler32(content))
	c.expect(http.StatusNotFound, http.MethodGet, "/webdav/wrong.bin", "")

	// Three more, and the server killed as soon as they are answered.
	for _, name := range []string{"k1", "k2", "k3"} {
		c.expect(http.StatusCreated, http.MethodPut, "/webdav/"+name+".bin", string(content))
	}
	s.kill()
	s = startServer(t, serverOptions{root: s.Root})
	c = einstein(s)
	for _, name := range []string{"none", "MD5", "ADLER32", "k1", "k2", "k3"} {
		p := "/webdav/" + name + ".bin"
		if got := c.prop(p, ocNS, "checksums"); got != want {
			t.Errorf("oc:checksums of %s after kill -9 and restart = %q, want %q", p, got, want)
		}
		resp, body := c.do(http.MethodGet, p, "")
		if got := resp.Header.Get("OC-Checksum"); !strings.Contains(want, got) || got == "" || body != string(content) {
			t.Errorf("GET %s: OC-Checksum %q, %d bytes; want one of %q and the %d bytes sent", p, got, len(body), want, len(content))
		}
	}
}

// toolDigest runs a coreutils digest tool on file and returns its hex.
func toolDigest(t *testing.T, tool, file string) string {
	t.Helper()
	out, err := testpeer.Command(tool, file).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", tool, file, err)
	}
	return strings.Fields(string(out))[0]
}

// ownAdler32 is Adler-32 (RFC 1950) as the RFC writes it, not the
// standard library's, in hex.
func ownAdler32(b []byte) string {
	const mod = 65521
	a, s := uint32(1), uint32(0)
	for _, c := range b {
		a = (a + uint32(c)) % mod
		s = (s + a) % mod
	}
	return hex.EncodeToString(binary.BigEndian.AppendUint32(nil, s<<16|a))
}
