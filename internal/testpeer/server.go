package testpeer

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// server is what PostgreSQL and MinIO alike hold: the binary, a data
// directory of their own, the claimed port and, while it runs, the
// process.
type server struct {
	bin   string
	dir   string
	port  int
	claim io.Closer // of port (FreePort), for as long as the server is
	cmd   *process
}

// newServer claims a free port and makes the data directory of a server
// named name (PostgreSQL, MinIO) run from bin.
func newServer(name, bin string) (server, error) {
	port, claim, err := claimFreePort()
	if err != nil {
		return server{}, err
	}
	dir, err := os.MkdirTemp("", "davspaces-"+strings.ToLower(name)+"-")
	if err != nil {
		claim.Close()
		return server{}, fmt.Errorf("creating the %s directory: %w", name, err)
	}
	return server{bin: bin, dir: dir, port: port, claim: claim}, nil
}

// stopProcess stops the server's process, if it runs.
func (s *server) stopProcess() {
	if s.cmd != nil {
		s.cmd.stop(os.Interrupt)
		s.cmd = nil
	}
}

// release gives the port back and removes the data; the process is
// stopped.
func (s *server) release() {
	s.claim.Close()
	os.RemoveAll(s.dir)
}
