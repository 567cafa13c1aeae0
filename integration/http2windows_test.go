package integration

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"os"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestHTTP2ReceiveWindow: an HTTP/2 client of the real Caddy may send 4 MiB
// of a body ahead of the server's reads, per stream (SETTINGS) and per
// connection (the first WINDOW_UPDATE), not Go's default 1 MiB, which
// makes browsers' uploads wait for window updates.
func TestHTTP2ReceiveWindow(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{tls: true})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(s.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: roots, ServerName: u.Hostname(), NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	const want = 4 << 20
	var stream, connection uint32
	for stream == 0 || connection == 0 {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v (stream window %d, connection window %d so far)", err, stream, connection)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			stream = 65535 // the protocol's default, unless announced
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				stream = v
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connection = 65535 + f.Increment
			}
		}
	}
	if stream != want || connection != want {
		t.Fatalf("the server lets a client send %d bytes ahead per stream and %d per connection, want %d each", stream, connection, want)
	}
}
