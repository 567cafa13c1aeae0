package testpeer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a PostgreSQL server of the tests: trust authentication on
// 127.0.0.1, no Unix socket, and no fsync (the tests kill Caddy, never the
// database, so its durability is not what they check).
type Postgres struct {
	server // bin is the directory of initdb and postgres
	dbs    atomic.Int64
}

// pgUser is the database superuser the tests connect as.
const pgUser = "davspaces"

// StartPostgres initialises a cluster in a temporary directory and starts
// it. The caller closes it.
func StartPostgres() (*Postgres, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	srv, err := newServer("PostgreSQL", bin)
	if err != nil {
		return nil, err
	}
	pg := &Postgres{server: srv}
	if err := pg.initdb(); err != nil {
		pg.Close()
		return nil, err
	}
	if err := pg.Start(); err != nil {
		pg.Close()
		return nil, err
	}
	return pg, nil
}

// postgresBin finds the PostgreSQL server binaries: on the PATH, or where
// Debian's packages put them (the newest version).
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("PostgreSQL server (initdb, postgres): %w", errMissing)
}

func (pg *Postgres) data() string { return filepath.Join(pg.dir, "data") }

func (pg *Postgres) initdb() error {
	if err := chownToServiceUser(pg.dir, "postgres"); err != nil {
		return err
	}
	cmd := Command(filepath.Join(pg.bin, "initdb"), "-D", pg.data(), "-U", pgUser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	if err := asServiceUser(cmd, "postgres"); err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, out)
	}
	return nil
}

// Start starts the server (again, after Stop) on its port and data, and
// waits until it takes connections.
func (pg *Postgres) Start() error {
	cmd := exec.Command(filepath.Join(pg.bin, "postgres"), "-D", pg.data(),
		"-p", fmt.Sprint(pg.port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "max_connections=300")
	if err := asServiceUser(cmd, "postgres"); err != nil {
		return err
	}
	p, err := startProcess(cmd, filepath.Join(pg.dir, "postgres.log"))
	if err != nil {
		return fmt.Errorf("starting PostgreSQL: %w", err)
	}
	pg.cmd = p
	return p.waitReady(func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
		if err == nil {
			conn.Close(ctx)
		}
		return err
	})
}

// Stop shuts the server down (fast shutdown: sessions are cut), as an
// outage would.
func (pg *Postgres) Stop() { pg.stopProcess() }

// Close stops the server and removes its data.
func (pg *Postgres) Close() {
	pg.Stop()
	pg.release()
}

// Addr is the server's host:port.
func (pg *Postgres) Addr() string { return hostPort(pg.port) }

// DSN is the connection string of database db.
func (pg *Postgres) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pgUser, pg.Addr(), db)
}

// NewDatabase creates an empty database and returns its DSN.
func (pg *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("test_%d", pg.dbs.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return pg.DSN(name)
}
